import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { type Browser, chromium } from 'playwright-core';

import { findChromium } from '../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../server/capture/chromium/chromium-switches.js';
import { PipeGuard } from '../server/capture/chromium/pipe-guard.js';
import { quantile } from './stats.js';

/**
 * What the pipe guard (a process between playwright and Chromium holding each DevTools message
 * until its end) costs: the browser's start, and a full-page screenshot of a tall page (a message
 * of a few MiB), each with the guard and without it, taken in turns in this process, as medians
 * and their ratio.
 *
 *   npm run bench:guard
 */
const ROUNDS = Number(process.env.GUARD_BENCH_ROUNDS ?? 8);

const TALL = `<!doctype html><body style="margin:0">${Array.from({ length: 200 }, (_, i) => `<p style="height:50px;margin:0;background:hsl(${i * 7},70%,60%)">row ${i} ${'text '.repeat(40)}</p>`).join('')}`;

async function main(): Promise<void> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(TALL));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const chromiumPath = findChromium(process.env.CHROMIUM_PATH);
  const guard = await PipeGuard.create(chromiumPath);
  const ways = { plain: chromiumPath, guarded: guard.executablePath };
  const launch: Record<string, number[]> = { plain: [], guarded: [] };
  const shot: Record<string, number[]> = { plain: [], guarded: [] };
  let bytes = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [way, executablePath] of Object.entries(ways)) {
        const started = performance.now();
        const browser: Browser = await chromium.launch({ executablePath, args: BASE_ARGS, headless: true });
        launch[way].push(performance.now() - started);
        try {
          const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
          await page.goto(url);
          const shotStarted = performance.now();
          bytes = (await page.screenshot({ fullPage: true })).length;
          shot[way].push(performance.now() - shotStarted);
        } finally {
          await browser.close();
        }
      }
    }
  } finally {
    await guard.dispose();
    server.close();
  }
  const row = (what: string, times: Record<string, number[]>) =>
    `${what.padEnd(44)} ${quantile(times.plain, 0.5).toFixed(0).padStart(6)} ms ${quantile(times.guarded, 0.5).toFixed(0).padStart(6)} ms   ${(quantile(times.guarded, 0.5) / quantile(times.plain, 0.5)).toFixed(2)}`;
  console.log(`${''.padEnd(44)} ${'plain'.padStart(9)} ${'guarded'.padStart(9)}   ratio  (medians of ${ROUNDS})`);
  console.log(row('browser start', launch));
  console.log(row(`full-page screenshot, 1920×10000 (${(bytes / 2 ** 20).toFixed(1)} MiB PNG)`, shot));
}

await main();
