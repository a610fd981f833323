/**
 * The driver of an MCP server's start-up rules (worker/import/mcp-rules/): starts the server as planned, and after
 * each start that did not list its tools asks the rules, in order, for the next start; the first that answers
 * decides (a start made already is never made again: the next rule is asked). It stops when the server lists its
 * tools, when no rule answers, or when the budget of starts is spent, and says which rules fired and why. Pure but for
 * `start`, which the import gives (a sandbox) and the transcript tests give (a recorded start-up).
 */
import type { McpEnvVar } from '../../core/packages/mcp-server.js';
import { STARTUP_RULES, type Attempt, type AttemptRecord, type Fired, type Next, type PackageCode, type RuleContext } from './mcp-rules/index.js';

/** At most this many starts of a server per import, the bundle's (worker/import/mcp.ts) included. */
export const MAX_STARTS = 6;

export interface StartupResult {
  /** The start that stands: the one that listed, else the failure to report. */
  final: AttemptRecord;
  /** Every start made, in order. */
  starts: AttemptRecord[];
  fired: Fired[];
  /** The budget ran out while a rule still had an answer. */
  spent: boolean;
}

export async function runStartup(o: {
  planned: { args: string[]; env: McpEnvVar[] };
  code: PackageCode;
  start: (a: Attempt) => Promise<AttemptRecord>;
  budget: number;
}): Promise<StartupResult> {
  const history: RuleContext['history'] = [];
  const fired: Fired[] = [];
  const key = (a: Attempt) => JSON.stringify([a.args, a.env.map((v) => v.name).sort(), a.inGuest]);
  const tried = new Set<string>();
  // Where a rule's start runs when it does not say: the guest's process, unless a child did better there.
  const prefersGuest = () =>
    !o.code.launcher && !history.some((h, i) => h.chosenBy?.rule === 'as-a-child' && h.record.outcome !== history[i - 1]?.record.outcome);
  const resolve = (n: Next): Attempt => ({ ...n.attempt, inGuest: n.attempt.inGuest ?? prefersGuest() });
  /** The first rule's answer that is not a start made already. */
  const ask = (last: AttemptRecord | undefined): { next: Next; attempt: Attempt; rule: string } | undefined => {
    const ctx: RuleContext = { planned: o.planned, code: o.code, history, last };
    for (const rule of STARTUP_RULES) {
      const next = rule.next(ctx);
      if (!next) continue;
      const attempt = resolve(next);
      if (!tried.has(key(attempt))) return { next, attempt, rule: rule.name };
    }
    return undefined;
  };
  let chosen: { next?: Next; attempt: Attempt; rule?: string } = ask(undefined) ?? { attempt: { ...o.planned, inGuest: !o.code.launcher } };
  let last: AttemptRecord | undefined;
  let spent = false;
  for (;;) {
    const { next, attempt, rule } = chosen;
    const by: Fired | undefined = rule && next ? { rule, why: next.why, ...(next.declared ? { declared: next.declared.map((v) => v.name) } : {}) } : undefined;
    tried.add(key(attempt));
    const record = await o.start(attempt);
    history.push({ record, ...(by ? { chosenBy: by } : {}) });
    if (by) fired.push(by);
    if (record.outcome === 'listed') return { final: record, starts: history.map((h) => h.record), fired, spent };
    // A start kept only on condition that did not meet it: the one before stands (and is what a refusal reports).
    if (next?.keepIf && !next.keepIf(record) && last) {
      if (by) by.why += '; not kept: it did no better';
    } else last = record;
    const answer = ask(last);
    if (!answer) break;
    if (history.length >= o.budget) {
      spent = true;
      break;
    }
    chosen = answer;
  }
  return { final: last!, starts: history.map((h) => h.record), fired, spent };
}
