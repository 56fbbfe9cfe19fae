/** A rectangle on a picture, in CSS px unless said otherwise. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A rectangle left out of the comparison. Without `tolerance` its pixels are ignored; with it,
 * the fraction of its pixels (0–1) that may differ before they count, like a monitor's threshold.
 */
export interface MaskRect extends Rect {
  tolerance?: number;
}

/**
 * What happened to a part of the page: `inserted` rows exist only in the new picture, `removed`
 * rows only in the baseline, `moved` rows are the same pixels at another height (not counted as
 * a difference), `changed` rows are in both at aligned places and their pixels differ.
 */
export type RegionKind = 'changed' | 'inserted' | 'removed' | 'moved';

/** Where a change is: its rectangle in the baseline (`before`) and in the new picture (`after`), null where it has none. */
export interface ChangeRegion {
  kind: RegionKind;
  before: Rect | null;
  after: Rect | null;
}

/** Rows of the baseline (`before`) and of the new picture (`after`) that hold the same pixels. */
export interface RowRun {
  before: number;
  after: number;
  rows: number;
}

/**
 * The most edits (rows inserted plus rows removed, between the common top and bottom) the row
 * alignment looks for. Myers' diff costs O((N + M) · D) time and, to walk back, O(D²) memory:
 * 2 000 edits bound it to about 16 MB and a fraction of a second on a 1920 × 10 000 picture.
 * Past it, rows are paired by position, as if nothing had moved.
 */
export const MAX_ROW_EDITS = 2_000;

/**
 * Two hashes of each row (FNV-1a over its 32-bit pixels, two seeds): 64 bits, so two different
 * rows of a tall picture taken as equal is not a case to plan for.
 */
export function hashRows(data: Uint8Array, width: number, height: number): Int32Array {
  const words = data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, width * height) : new Uint32Array(Uint8Array.from(data).buffer);
  const hashes = new Int32Array(height * 2);
  for (let y = 0; y < height; y++) {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    for (let i = y * width, end = i + width; i < end; i++) {
      const w = words[i]!;
      h1 = Math.imul(h1 ^ w, 16777619);
      h2 = Math.imul(h2 ^ w, 2246822519) ^ (h2 >>> 15);
    }
    hashes[y * 2] = h1;
    hashes[y * 2 + 1] = h2;
  }
  return hashes;
}

/**
 * The runs of rows the two pictures share, in order: the common top and bottom, then Myers' diff
 * on the rows between (the fewest rows inserted and removed). Between two runs, rows of the
 * baseline were removed, rows of the new picture inserted, or both (a change in place).
 */
export function alignRows(before: Int32Array, after: Int32Array, maxEdits = MAX_ROW_EDITS): RowRun[] {
  const n = before.length / 2;
  const m = after.length / 2;
  const same = (b: number, a: number) => before[b * 2] === after[a * 2] && before[b * 2 + 1] === after[a * 2 + 1];
  let top = 0;
  while (top < n && top < m && same(top, top)) top++;
  let bottom = 0;
  while (bottom < n - top && bottom < m - top && same(n - 1 - bottom, m - 1 - bottom)) bottom++;
  const runs: RowRun[] = [];
  if (top > 0) runs.push({ before: 0, after: 0, rows: top });
  const middle = myers(n - top - bottom, m - top - bottom, (b, a) => same(top + b, top + a), maxEdits) ?? [];
  for (const run of middle) runs.push({ before: run.before + top, after: run.after + top, rows: run.rows });
  if (bottom > 0) runs.push({ before: n - bottom, after: m - bottom, rows: bottom });
  return withoutChanceRuns(runs, n, m);
}

/**
 * Drops the runs no longer than the edits on either side of them: rows that match by chance
 * (a white row inside a changed block, a box recoloured in place that Myers reads as rows
 * inserted, a few kept, as many removed). Their rows join the edits around them, which then
 * read as one change in place. As diff-match-patch's semantic clean-up does for characters.
 */
function withoutChanceRuns(runs: RowRun[], n: number, m: number): RowRun[] {
  const kept = [...runs];
  for (let i = 0; i < kept.length; ) {
    const previous = kept[i - 1] ?? { before: 0, after: 0, rows: 0 };
    const next = kept[i + 1] ?? { before: n, after: m, rows: 0 };
    const run = kept[i]!;
    const editsAbove = Math.max(run.before - previous.before - previous.rows, run.after - previous.after - previous.rows);
    const editsBelow = Math.max(next.before - run.before - run.rows, next.after - run.after - run.rows);
    if (run.rows <= editsAbove && run.rows <= editsBelow) {
      kept.splice(i, 1);
      // The run above may now stand between larger edits.
      i = Math.max(0, i - 1);
    } else {
      i++;
    }
  }
  return kept;
}

/** Myers' O(ND) diff: the common runs of two sequences, or null past maxEdits edits. */
function myers(n: number, m: number, same: (b: number, a: number) => boolean, maxEdits: number): RowRun[] | null {
  if (n === 0 || m === 0) return [];
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d]: v over k = -(d+1)..(d+1) as it was before round d, to walk back.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, maxEdits); d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && same(x, y)) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return walkBack(trace, n, m);
    }
  }
  return null;
}

function walkBack(trace: Int32Array[], n: number, m: number): RowRun[] {
  const runs: RowRun[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const at = (k: number) => v[k + d + 1]!;
    const k = x - y;
    const previousK = d === 0 ? 0 : k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const previousX = d === 0 ? 0 : at(previousK);
    const previousY = previousX - previousK;
    // The diagonal after the edit of round d: rows that match.
    const startX = d === 0 ? 0 : previousK === k + 1 ? previousX : previousX + 1;
    const rows = x - startX;
    if (rows > 0) runs.push({ before: startX, after: startX - k, rows });
    x = previousX;
    y = previousY;
  }
  return runs.reverse();
}
