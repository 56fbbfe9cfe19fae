import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { comparePictures, matchInBands } from '../../server/monitors/picture-diff.js';
import { checkSchedule, nextOccurrence } from '../../server/monitors/schedule.js';

const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

describe('nextOccurrence', () => {
  it('keeps an interval on its phase, and after missed occurrences gives the first one still to come', () => {
    const from = at('2026-11-25T10:00:00Z');
    expect(nextOccurrence({ every_minutes: 15 }, from)).toBe(from + 15 * MINUTE);
    expect(nextOccurrence({ every_minutes: 15 }, from, from + 3 * MINUTE)).toBe(from + 15 * MINUTE);
    expect(nextOccurrence({ every_minutes: 15 }, from, from + 15 * MINUTE)).toBe(from + 30 * MINUTE);
    expect(nextOccurrence({ every_minutes: 15 }, from, from + 61 * MINUTE)).toBe(from + 75 * MINUTE);
  });

  it('reads a cron expression in its time zone, across a change of summer time', () => {
    const nineInParis = { cron: '0 9 * * *', timezone: 'Europe/Paris' };
    expect(new Date(nextOccurrence(nineInParis, at('2026-11-25T10:00:00Z'))).toISOString()).toBe('2026-11-26T08:00:00.000Z');
    expect(new Date(nextOccurrence(nineInParis, at('2026-07-01T10:00:00Z'))).toISOString()).toBe('2026-07-02T07:00:00.000Z');
    expect(new Date(nextOccurrence({ cron: '30 * * * *' }, at('2026-11-25T10:31:00Z'))).toISOString()).toBe('2026-11-25T11:30:00.000Z');
    // Missed ones: the next after now, not after the one that was due.
    expect(new Date(nextOccurrence({ cron: '*/5 * * * *' }, at('2026-11-25T10:00:00Z'), at('2026-11-25T12:02:00Z'))).toISOString()).toBe(
      '2026-11-25T12:05:00.000Z',
    );
  });
});

describe('checkSchedule', () => {
  const now = at('2026-11-25T10:00:00Z');
  it('takes 5-field expressions and intervals at or over the floor', () => {
    expect(() => checkSchedule({ cron: '*/10 * * * 1-5', timezone: 'America/New_York' }, 10, now)).not.toThrow();
    expect(() => checkSchedule({ every_minutes: 10 }, 10, now)).not.toThrow();
  });

  it.each([
    [{ every_minutes: 9 }, 'at least 10'],
    [{ cron: '*/5 * * * *' }, 'more often'],
    [{ cron: '0,5 * * * *' }, 'more often'],
    [{ cron: '0 0 * * * *' }, '5 fields'],
    [{ cron: '0 25 * * *' }, 'not a valid cron'],
    [{ cron: '0 9 * * *', timezone: 'Europe/Nowhere' }, 'IANA'],
  ])('refuses %j, naming the schedule', (schedule, words) => {
    expect(() => checkSchedule(schedule, 10, now)).toThrow(words);
  });
});

describe('comparePictures', () => {
  const solid = (width: number, height: number, colour: string) =>
    sharp({ create: { width, height, channels: 3, background: colour } }).png().toBuffer();

  it('finds no difference and makes no diff picture for equal pictures', async () => {
    const picture = await solid(40, 30, '#336699');
    expect(await comparePictures(picture, picture)).toEqual({ difference: 0, diff: null, regions: [] });
  });

  it('counts the differing pixels over all pixels, and paints them red', async () => {
    const before = await solid(40, 30, '#ffffff');
    const after = await sharp(before)
      .composite([{ input: await solid(10, 6, '#000000'), left: 5, top: 4 }])
      .png()
      .toBuffer();
    const found = await comparePictures(before, after);
    expect(found.difference).toBe(60 / 1200);
    const { data } = await sharp(found.diff!).raw().toBuffer({ resolveWithObject: true });
    const red = (x: number, y: number) => data[(y * 40 + x) * 4] === 255 && data[(y * 40 + x) * 4 + 1] === 0;
    expect(red(5, 4)).toBe(true);
    expect(red(14, 9)).toBe(true);
    expect(red(15, 9)).toBe(false);
  });

  it('counts a change of width as a whole change', async () => {
    const found = await comparePictures(await solid(40, 30, '#ffffff'), await solid(60, 30, '#ffffff'));
    expect(found.difference).toBe(1);
    expect(found.diff).not.toBeNull();
  });

  it('compares in bands exactly as in one call, anti-aliased text across band edges included', async () => {
    // Text on the rows where bands meet (256, 512), moved by a pixel in the new picture (its
    // anti-aliased edges are not counted), and a box that really changed.
    const width = 300;
    const height = 700;
    const svg = (shift: number, box: boolean) =>
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>` +
          [250, 508, 690].map((y) => `<text x="${10 + shift}" y="${y + 6}" font-size="15" font-family="sans-serif">Changed words, ${y}</text>`).join('') +
          (box ? '<rect x="200" y="240" width="40" height="30" fill="#c00"/>' : '') +
          '</svg>',
      );
    const raw = async (shift: number, box: boolean) => new Uint8Array(await sharp(svg(shift, box)).ensureAlpha().raw().toBuffer());
    const [before, after] = await Promise.all([raw(0, false), raw(1, true)]);
    const whole = new Uint8Array(width * height * 4);
    const expected = pixelmatch(after, before, whole, width, height, { threshold: 0.1, includeAA: false, alpha: 0.2, diffColor: [255, 0, 0], aaColor: [255, 255, 255] });
    const banded = new Uint8Array(width * height * 4);
    expect(await matchInBands(after, before, banded, width, height)).toBe(expected);
    expect(expected).toBeGreaterThan(0);
    expect(Buffer.from(banded).equals(Buffer.from(whole))).toBe(true);
  });
});
