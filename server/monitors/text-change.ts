import type { TextChange } from '../store/records/monitor-record.js';

/** Characters of a page's text a check keeps: enough for the text a person reads on a page, bounded for the check's record. */
export const MAX_CHECK_TEXT_CHARS = 20_000;
/** Lines reported as added, and as removed, at most. */
export const MAX_CHANGED_LINES = 20;
/** Characters of a reported line at most; a longer one is cut and ends with `…`. */
export const MAX_LINE_CHARS = 200;

/** The text a check keeps: cut at MAX_CHECK_TEXT_CHARS. */
export const keptText = (text: string) => (text.length > MAX_CHECK_TEXT_CHARS ? text.slice(0, MAX_CHECK_TEXT_CHARS) : text);

const linesOf = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);

const shortened = (line: string) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS - 1)}…` : line);

/**
 * The lines of `after` that `before` has not, and the reverse, each counted (a line twice in one
 * and once in the other is one added or removed), in the order of their text: a multiset
 * difference, linear in the texts, which tells what was said differently (a price from 49 to 59
 * is one line removed and one added) without placing moved lines. null when both hold the same
 * lines.
 */
export function textChange(before: string, after: string): TextChange | null {
  const counts = new Map<string, number>();
  const old = linesOf(before);
  const now = linesOf(after);
  for (const line of old) counts.set(line, (counts.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of now) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else added.push(line);
  }
  const removed: string[] = [];
  for (const line of old) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      counts.set(line, left - 1);
      removed.push(line);
    }
  }
  if (added.length === 0 && removed.length === 0) return null;
  return { added: added.slice(0, MAX_CHANGED_LINES).map(shortened), removed: removed.slice(0, MAX_CHANGED_LINES).map(shortened) };
}
