/**
 * Agents often send a retrieval instruction before the request itself — "Given a user request, retrieve the API that
 * can fulfil it: <request>", "Instruct: … \nQuery: <request>" — the style embedding models are prompted in. Its words
 * (retrieve, user, request, API, tool, relevant…) are in many tool descriptions, so a lexical ranker reads them as
 * part of the request and ranks worse than without them (MetaTool held-out top-1 46.6 % → 33.0 % behind the first
 * instruction above; docs/search.md). `withoutInstruction` keeps the request only, when the text before a `:` (or
 * before a closing `Query:`) reads as such an instruction — at least four words, a retrieval verb, what is to be
 * retrieved (an API, a tool, a model card…), and impersonal (no "you", "my"…: a person's own request speaks to
 * someone) — and what follows is a request of two words or more. Anything else is returned as it came. Of MetaTool's
 * 20,614 queries none is changed.
 */

const VERB =
  /\b(?:retrieve|retrieving|retrieves|find|finding|search|searching|identify|select|recommend|return|rank|represent|representing|choose|pick|locate|fetch)\b/i;
const TARGET = /\b(?:apis?|tools?|functions?|plugins?|endpoints?|models?|cards?|documents?|passages?|services?|skills?|commands?|methods?|operations?)\b/i;
/** A closing marker after the instruction: "…\nQuery: <request>". */
const MARKER = /(?:^|[\s.])(?:query|request|question|input|user request|user query)\s*:\s*/gi;
/** The instruction is looked for only this far into the text. */
const HEAD_CHARS = 300;
const MIN_HEAD_WORDS = 4;

/** A person's own request speaks to someone ("can you find…", "your account"); an instruction is impersonal. */
const PERSONAL = /\b(?:you|your|i|me|my|we|our|us)\b/i;

const isInstruction = (head: string): boolean => {
  const words = head.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length >= MIN_HEAD_WORDS && VERB.test(head) && TARGET.test(head) && !PERSONAL.test(head);
};
/** What is left must still be a request of two words or more. */
const isRequest = (tail: string): boolean => (tail.match(/[\p{L}\p{N}]+/gu) ?? []).length >= 2;

/** The request of a query that starts with a retrieval instruction; the query itself otherwise. */
export function withoutInstruction(q: string): string {
  const start = q.slice(0, HEAD_CHARS);
  let last: RegExpExecArray | undefined;
  for (const m of start.matchAll(MARKER)) last = m as RegExpExecArray;
  if (last && last.index > 0) {
    const head = q.slice(0, last.index);
    const tail = q.slice(last.index + last[0].length).trim();
    if (isRequest(tail) && isInstruction(head)) return tail;
  }
  const colon = start.search(/[:\n]/);
  if (colon > 0) {
    const tail = q.slice(colon + 1).trim();
    if (isRequest(tail) && isInstruction(q.slice(0, colon))) return tail;
  }
  return q;
}
