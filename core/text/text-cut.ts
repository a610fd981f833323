/**
 * Cutting text to a length without cutting a character in half: string lengths count UTF-16 units, and a cut
 * between the two halves of a surrogate pair (an emoji) leaves a lone surrogate — not Unicode, refused by strict JSON
 * parsers and by Postgres' jsonb.
 */

/** The first `end` UTF-16 units of `s`, one fewer when the last would be the first half of a pair. */
export function sliceWhole(s: string, end: number): string {
  if (s.length <= end) return s;
  const last = s.charCodeAt(end - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/**
 * `s` in at most `max` units: cut at a word when one ends in the second half, never inside a character, then
 * `trailing` removed (null: nothing) and an ellipsis added.
 */
export function cutAtWord(s: string, max: number, trailing: RegExp | null = /\s+$/): string {
  if (s.length <= max) return s;
  const cut = sliceWhole(s, max - 1);
  const space = cut.lastIndexOf(' ');
  const kept = space > max / 2 ? cut.slice(0, space) : cut;
  return `${trailing ? kept.replace(trailing, '') : kept}…`;
}
