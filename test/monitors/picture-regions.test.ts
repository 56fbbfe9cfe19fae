import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { comparePictures } from '../../server/monitors/picture-diff.js';
import { proposeMasks } from '../../server/monitors/proposed-masks.js';
import { captureRequest } from '../capture/conformance-cases.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';

/**
 * An article of 40 paragraphs on loopback: `/article` as it was, `/article?added=1` with a
 * paragraph inserted after the second, `/clock` with a clock showing the time of each request.
 */
async function startArticle(): Promise<{ url: string; close(): Promise<void> }> {
  const paragraphs = Array.from({ length: 40 }, (_, i) => `<p>Paragraph ${i + 1}: the watched page says the same thing it said yesterday, line ${i + 1}.</p>`);
  const added = '<p style="color:#063">A new paragraph, added near the top, over two lines of text so that it takes some height on the page.</p>';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const style = '<style>html,body{margin:0;background:#fff}body{font:18px/24px sans-serif;padding:20px 40px;width:600px}p{margin:0 0 16px}</style>';
    const clock = `<div style="position:absolute;left:700px;top:60px;width:220px;height:40px;overflow:hidden;font:32px/40px monospace">${new Date().toISOString().slice(11, 23)}</div>`;
    const body = url.pathname === '/clock' ? paragraphs.slice(0, 10).join('') + clock : [...paragraphs.slice(0, 2), ...(url.searchParams.has('added') ? [added] : []), ...paragraphs.slice(2)].join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><meta charset="utf-8">${style}</head><body>${body}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('comparing real captures, rows aligned first', () => {
  const setup = engineWithFixtures();
  let article: Awaited<ReturnType<typeof startArticle>>;
  beforeAll(async () => {
    article = await startArticle();
  });
  afterAll(() => article?.close());
  const capture = async (path: string) => (await setup.engine.capture(captureRequest(article.url, path, { fullPage: true }))).image;

  it('reports a paragraph added near the top of a full page as one inserted region, and nothing below it as changed', async () => {
    const [before, after] = [await capture('/article'), await capture('/article?added=1')];
    const found = await comparePictures(before, after);
    expect(found.regions.filter((r) => r.kind === 'inserted')).toHaveLength(1);
    expect(found.regions.filter((r) => r.kind === 'changed' || r.kind === 'removed')).toEqual([]);
    const inserted = found.regions.find((r) => r.kind === 'inserted')!.after!;
    // Two lines of 24 px and a margin of 16, where the third paragraph was (20 + 2 × 64), give
    // or take the white between paragraphs, which matches wherever it is put.
    expect(inserted.height).toBe(64);
    expect(inserted.y).toBeGreaterThanOrEqual(148 - 16);
    expect(inserted.y).toBeLessThanOrEqual(148 + 16);
    expect(found.regions.some((r) => r.kind === 'moved' && r.after!.y > inserted.y)).toBe(true);
    // Two pictures of different heights, and only the new paragraph's rows count.
    expect(found.difference).toBeLessThan(0.1);
  });

  it('proposes a mask over a live clock from two captures of its page', async () => {
    const first = await capture('/clock');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const masks = await proposeMasks(first, await capture('/clock'));
    expect(masks).toHaveLength(1);
    const [mask] = masks;
    expect(mask!.x).toBeGreaterThanOrEqual(700 - 8);
    expect(mask!.x + mask!.width).toBeLessThanOrEqual(920 + 8);
    expect(mask!.y).toBeGreaterThanOrEqual(60 - 8);
    expect(mask!.y + mask!.height).toBeLessThanOrEqual(100 + 8);
  });
});
