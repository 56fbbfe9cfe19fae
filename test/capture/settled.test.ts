// wait_until: settled, the default for pictures: a live app is captured once it has drawn, its
// open connections are not waited for nor called busy, and a page that never stops changing is
// taken at the cap with a warning saying where. Real Chromium through the ChromiumEngine, the
// live pages of test/fixtures/live-app-pages.ts on loopback.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import type { CaptureResult } from '../../server/capture/engine.js';
import { type LiveAppServer, startLiveAppServer } from '../fixtures/live-app-pages.js';
import { captureRequest } from './conformance-cases.js';

/** The share of the chart's box (the canvas, 600 × 300 px under a 24 px heading) that is red bars. */
async function redShareOfChart(result: CaptureResult): Promise<number> {
  const { data, info } = await sharp(result.image).extract({ left: 8, top: 60, width: 600, height: 300 }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let red = 0;
  for (let i = 0; i < data.length; i += info.channels) if (data[i]! > 200 && data[i + 1]! < 80 && data[i + 2]! < 80) red++;
  return red / (info.width * info.height);
}

const codes = (result: CaptureResult) => result.warnings.map((w) => w.code);

describe('a capture that waits for the page to settle', () => {
  let server: LiveAppServer;
  let engine: ChromiumEngine;
  beforeAll(async () => {
    server = await startLiveAppServer();
    engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
    await engine.start();
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    await server?.close();
  });
  const capture = async (path: string, options: CaptureOptions = {}) => {
    const started = Date.now();
    const result = await engine.capture(captureRequest(server.url, path, { options }));
    return { result, ms: Date.now() - started };
  };

  it('captures a dashboard drawn by script after load from data that comes late, drawn, by default', async () => {
    const { result } = await capture('/live/dashboard.html');
    // Bars cover 1,860 of 6,000 columns × their heights: about 31 % of the box once drawn.
    expect(await redShareOfChart(result)).toBeGreaterThan(0.25);
    expect(codes(result)).toEqual([]);
    // The dashboard polls every second: its data requests in flight are not a busy network.
    expect(server.hits.get('/live/data')).toBeGreaterThanOrEqual(1);
  });

  it('captured with wait_until load, the same dashboard comes out with its chart empty', async () => {
    const { result } = await capture('/live/dashboard.html', { waitUntil: 'load' });
    expect(await redShareOfChart(result)).toBeLessThan(0.05);
  });

  it('waits for work the page put off for a moment: rows drawn from a timeout once the data came', async () => {
    const { result } = await capture('/live/rows.html');
    expect(result.html).toContain('Transfer 12');
    expect(codes(result)).toEqual([]);
  });

  it('waits while the page shows loading states: a gauge showing "-" until its figure comes', async () => {
    const { result } = await capture('/live/gauges.html');
    expect(result.html).toContain('<span id="disk" style="font-size:40px">42</span>');
    expect(codes(result)).toEqual([]);
  });

  it('reaches settled with a WebSocket and an event stream open, without waiting for its cap and without network_busy', async () => {
    const { result, ms } = await capture('/live/streams.html', { settleTimeoutMs: 8_000 });
    expect(codes(result)).toEqual([]);
    expect(ms).toBeLessThan(6_000);
  });

  it('counts a fetch held open for seconds as a long poll: settled, not network_busy', async () => {
    const { result, ms } = await capture('/live/long-poll.html', { settleTimeoutMs: 8_000 });
    expect(codes(result)).toEqual([]);
    expect(ms).toBeLessThan(7_000);
  });

  it('settles a dashboard whose panels poll all the time once each has its first figure, without not_settled', async () => {
    const { result, ms } = await capture('/live/panels.html', { settleTimeoutMs: 6_000 });
    expect(result.warnings).toEqual([]);
    expect(result.html).not.toMatch(/<span id="host[a-l]">-<\/span>/);
    expect(ms).toBeLessThan(5_000);
  });

  it('leaves out a clock that keeps changing on its own, and settles', async () => {
    const { result } = await capture('/live/clock.html', { settleTimeoutMs: 6_000 });
    expect(codes(result)).toEqual([]);
  });

  it('takes a page that never stops changing at the cap, and says not_settled with where and how long', async () => {
    const { result, ms } = await capture('/live/restless.html', { settleTimeoutMs: 1_000 });
    expect(ms).toBeGreaterThanOrEqual(1_000);
    const warning = result.warnings.find((w) => w.code === 'not_settled');
    expect(warning?.message).toMatch(/1000 ms/);
    expect(warning?.message).toMatch(/\d+ × \d+ px/);
  });

  it('does not wait, nor warn, with wait_until load on a page that never stops changing', async () => {
    const { result } = await capture('/live/restless.html', { waitUntil: 'load' });
    expect(codes(result)).not.toContain('not_settled');
  });
});
