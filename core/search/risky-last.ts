/**
 * Flagged tools rank lower (issue 43 item 4): within one page of hits, a tool with risks (core/packages/poisoning.ts)
 * comes after every tool without, each group keeping the engine's order. Their halved qualityScore
 * (core/repos/tools.ts refreshQualityScore) lowers them in the list and among equal matches as well.
 */
export function riskyLast<T>(items: T[], isRisky: (t: T) => boolean): T[] {
  return [...items.filter((t) => !isRisky(t)), ...items.filter(isRisky)];
}
