/**
 * Finds every occurrence of many literal strings in a text in one pass (an Aho-Corasick automaton over UTF-16 code
 * units), for redaction (redaction.ts). Hand-written, small and flat: the npm implementations tried
 * (@monyone/aho-corasick) keep a Map and an object per trie node and took seconds to build for the bounded env's
 * forms (bench/redaction.ts), where this one takes milliseconds. Build time and memory are linear in the total length
 * of the patterns, a scan is linear in the text whatever the number of patterns.
 */

/** A set of literal strings, compiled once, that reports where they occur in a text. */
export interface MultiMatcher {
  /**
   * The parts of `text` covered by at least one pattern, as [begin, end) ranges in order, overlapping occurrences
   * merged into one range.
   */
  covered(text: string): Array<[number, number]>;
}

export function createMultiMatcher(patterns: string[]): MultiMatcher {
  // Trie, node 0 the root, at most one node per pattern character. Most nodes of long patterns have one child: it is
  // kept in flat arrays, and only a node with more children gets a Map (code unit -> node) for the others.
  const capacity = patterns.reduce((n, p) => n + p.length, 1);
  const firstCode = new Int32Array(capacity).fill(-1);
  const firstChild = new Int32Array(capacity);
  const longest = new Int32Array(capacity); // length of the longest pattern ending at this node (0: none)
  const fail = new Int32Array(capacity);
  const more = new Map<number, Map<number, number>>();
  let nodes = 1;
  const child = (node: number, code: number): number => {
    if (firstCode[node] === code) return firstChild[node];
    return firstCode[node] === -1 ? -1 : (more.get(node)?.get(code) ?? -1);
  };
  for (const p of patterns) {
    let node = 0;
    for (let i = 0; i < p.length; i++) {
      const code = p.charCodeAt(i);
      let next = child(node, code);
      if (next === -1) {
        next = nodes++;
        if (firstCode[node] === -1) {
          firstCode[node] = code;
          firstChild[node] = next;
        } else {
          let m = more.get(node);
          if (!m) more.set(node, (m = new Map()));
          m.set(code, next);
        }
      }
      node = next;
    }
    if (p.length > 0) longest[node] = p.length;
  }
  const step = (from: number, code: number): number => {
    let node = from;
    for (;;) {
      const to = child(node, code);
      if (to !== -1) return to;
      if (node === 0) return 0;
      node = fail[node];
    }
  };
  // Failure links, breadth first; a node's longest match is its own or its failure node's.
  const queue = new Int32Array(nodes);
  let tail = 1;
  for (let head = 0; head < tail; head++) {
    const node = queue[head];
    if (firstCode[node] === -1) continue;
    const others = more.get(node);
    const count = 1 + (others?.size ?? 0);
    const codes = others ? [firstCode[node], ...others.keys()] : [firstCode[node]];
    const tos = others ? [firstChild[node], ...others.values()] : [firstChild[node]];
    for (let k = 0; k < count; k++) {
      const to = tos[k];
      fail[to] = node === 0 ? 0 : step(fail[node], codes[k]);
      if (longest[to] === 0) longest[to] = longest[fail[to]];
      queue[tail++] = to;
    }
  }

  return {
    covered(text) {
      const ranges: Array<[number, number]> = [];
      let node = 0;
      for (let i = 0; i < text.length; i++) {
        node = step(node, text.charCodeAt(i));
        const len = longest[node];
        if (len === 0) continue;
        let begin = i + 1 - len;
        // Earlier ranges this occurrence overlaps (or touches) become part of it.
        while (ranges.length > 0 && begin <= ranges[ranges.length - 1][1]) begin = Math.min(begin, ranges.pop()![0]);
        ranges.push([begin, i + 1]);
      }
      return ranges;
    },
  };
}
