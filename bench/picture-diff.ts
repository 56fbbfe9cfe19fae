import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

import { comparePictures, matchInBands } from '../server/monitors/picture-diff.js';
import { alignRows, hashRows } from '../server/monitors/picture-regions.js';

/**
 * A monitor's comparison of a tall page (DIFF_BENCH_HEIGHT rows of 1920, default 10 000) in
 * bands (matchInBands, as comparePictures runs it) against one pixelmatch call over the whole
 * picture, both here, in the same process: the longest the event loop was held, and the time.
 * Then the row alignment comparePictures runs first: hashing and aligning the rows of the
 * picture and of a copy with INSERTED rows added near the top (the rest moved, a few blocks
 * changed), alone and within a whole comparePictures call (PNG decoding and drawing included).
 *
 *   npm run bench:diff
 */
const WIDTH = 1920;
const HEIGHT = Number(process.env.DIFF_BENCH_HEIGHT ?? 10_000);
const ROUNDS = Number(process.env.DIFF_BENCH_ROUNDS ?? 3);
const INSERTED = 120;
const OPTIONS = { threshold: 0.1, includeAA: false, alpha: 0.2, diffColor: [255, 0, 0] as [number, number, number], aaColor: [255, 255, 255] as [number, number, number] };

/** Two pictures of stripes that differ in a few blocks, so no band takes pixelmatch's fast path for equal pictures. */
function pictures(): [Uint8Array, Uint8Array] {
  const a = new Uint8Array(WIDTH * HEIGHT * 4);
  for (let i = 0; i < a.length; i += 4) {
    const y = Math.floor(i / 4 / WIDTH);
    a[i] = a[i + 1] = a[i + 2] = y % 40 < 20 ? 250 : 30;
    a[i + 3] = 255;
  }
  const b = Uint8Array.from(a);
  for (let y = 0; y < HEIGHT; y += 97) for (let x = 100; x < 140; x++) b[(y * WIDTH + x) * 4] = 0;
  return [a, b];
}

async function measure(run: () => Promise<number> | number): Promise<{ ms: number; stallMs: number; differing: number }> {
  // A ticker every 2 ms: the longest gap between its ticks is the longest the loop was held.
  let last = performance.now();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 2);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const started = performance.now();
  const differing = await run();
  const ms = performance.now() - started;
  // One turn of the loop after the work, so a hold at its end is seen.
  await new Promise((resolve) => setTimeout(resolve, 10));
  clearInterval(ticker);
  return { ms, stallMs, differing };
}

async function main(): Promise<void> {
  const [before, after] = pictures();
  const rows: Array<{ whole: Awaited<ReturnType<typeof measure>>; bands: Awaited<ReturnType<typeof measure>> }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const whole = await measure(() => pixelmatch(after, before, new Uint8Array(after.length), WIDTH, HEIGHT, OPTIONS));
    const bands = await measure(() => matchInBands(after, before, new Uint8Array(after.length), WIDTH, HEIGHT));
    if (bands.differing !== whole.differing) throw new Error(`bands found ${bands.differing} pixels, one call ${whole.differing}`);
    rows.push({ whole, bands });
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  const wholeStall = median(rows.map((r) => r.whole.stallMs));
  const bandStall = median(rows.map((r) => r.bands.stallMs));
  const wholeMs = median(rows.map((r) => r.whole.ms));
  const bandMs = median(rows.map((r) => r.bands.ms));
  console.log(`${WIDTH}×${HEIGHT}, ${ROUNDS} rounds, medians`);
  console.log(`one call: ${wholeMs.toFixed(0)} ms, event loop held up to ${wholeStall.toFixed(0)} ms`);
  console.log(`bands:    ${bandMs.toFixed(0)} ms, event loop held up to ${bandStall.toFixed(0)} ms`);
  console.log(`ratio bands/one call: time ${(bandMs / wholeMs).toFixed(2)}, longest hold ${(bandStall / wholeStall).toFixed(3)}`);
  await alignment(before, after, median);
}

/** The cost of aligning rows: `after` with INSERTED rows of another colour put in at row 300. */
async function alignment(before: Uint8Array, after: Uint8Array, median: (values: number[]) => number): Promise<void> {
  const rowBytes = WIDTH * 4;
  const taller = new Uint8Array(after.length + INSERTED * rowBytes);
  taller.set(after.subarray(0, 300 * rowBytes));
  for (let i = 300 * rowBytes; i < (300 + INSERTED) * rowBytes; i += 4) taller.set([40, 120, 200, 255], i);
  taller.set(after.subarray(300 * rowBytes), (300 + INSERTED) * rowBytes);
  const times: number[] = [];
  let runs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    runs = alignRows(hashRows(before, WIDTH, HEIGHT), hashRows(taller, WIDTH, HEIGHT + INSERTED)).length;
    times.push(performance.now() - started);
  }
  const png = (data: Uint8Array, height: number) => sharp(data, { raw: { width: WIDTH, height, channels: 4 } }).png({ compressionLevel: 1 }).toBuffer();
  const [baseline, current] = await Promise.all([png(before, HEIGHT), png(taller, HEIGHT + INSERTED)]);
  const whole: number[] = [];
  let regions = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    regions = (await comparePictures(baseline, current)).regions.length;
    whole.push(performance.now() - started);
  }
  console.log(`row alignment (hash + align, ${INSERTED} rows inserted at 300, ${runs} runs): ${median(times).toFixed(0)} ms`);
  console.log(`comparePictures on the PNGs (decode, align, match, draw; ${regions} regions): ${median(whole).toFixed(0)} ms`);
}

await main();
