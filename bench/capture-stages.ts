// Where a capture's time goes: the ChromiumEngine's steps, one at a time, with a timestamp after
// each, on the benchmark's pages. `npx tsc -p tsconfig.json && node dist/bench/capture-stages.js
// [--rounds N] [--chromium PATH]`. Prints the median of each step per page; it asserts nothing.
// The steps are the engine's own building blocks, called in the engine's order; a fresh
// context is opened on the spot here, where the engine takes one it prepared in advance, and a
// page that starts requests after load would be waited for again (not these pages).
import { parseArgs } from 'node:util';
import { documentSource } from '../server/capture/chromium-engine.js';
import { openJobPage } from '../server/capture/context-prewarmer.js';
import { scrollThroughPage, settleAndMeasure } from '../server/capture/page-scripts.js';
import { PageTraffic } from '../server/capture/page-traffic.js';
import { NETWORK_IDLE_MAX_MS } from '../server/capture/quiet-network.js';
import { startFixtureServer } from '../test/fixtures/fixture-server.js';
import { contextOptions, launch } from './browser-baselines.js';
import { DEFAULT_CHROMIUM_PATH, MIX } from './scenarios.js';
import { quantile } from './stats.js';

const { values: flags } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, chromium: { type: 'string', default: DEFAULT_CHROMIUM_PATH } },
});

async function main() {
  const rounds = Number(flags.rounds);
  const fixtures = await startFixtureServer();
  const browser = await launch(flags.chromium!);
  const times = new Map<string, number[]>();
  try {
    for (const s of MIX) {
      for (let round = 0; round <= rounds; round++) {
        // Round 0 warms the page's resources and the code paths; it is not counted.
        let last = performance.now();
        const lap = (step: string) => {
          const now = performance.now();
          if (round > 0) (times.get(`${s.name}\t${step}`) ?? times.set(`${s.name}\t${step}`, []).get(`${s.name}\t${step}`)!).push(now - last);
          last = now;
        };
        const job = await openJobPage(browser, contextOptions(s, browser.version()));
        lap('new context + page (prepared ahead in the engine)');
        const traffic = new PageTraffic(job.page);
        try {
          await job.page.goto(`${fixtures.url}${s.path}`, { waitUntil: 'domcontentloaded' });
          lap('goto until DOMContentLoaded');
          await job.page.waitForLoadState('load');
          lap('until load');
          await traffic.networkIdle(NETWORK_IDLE_MAX_MS, 0);
          lap('requests in flight at load');
          if (s.fullPage) {
            const steps = await job.page.evaluate(scrollThroughPage, { maxMs: 5000, maxHeight: 16_384, onlyWhenLazy: true });
            lap(`decide to scroll, and scroll (${steps} steps)`);
          }
          const geometry = await job.page.evaluate(settleAndMeasure, { waitForFrame: false });
          lap('fonts + measure');
          const height = s.fullPage ? geometry.fullHeight : geometry.viewportHeight;
          const clip = { x: 0, y: 0, width: geometry.viewportWidth, height, scale: s.preset.deviceScaleFactor };
          const source = documentSource(job);
          await job.cdp.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: s.fullPage, clip });
          await source;
          lap("CDP captureScreenshot (Chromium's PNG), the document's source alongside");
          await documentSource(job);
          lap("for comparison: the document's source alone (DOM.getOuterHTML)");
          await job.page.content();
          lap("for comparison: page.content(), playwright's first call in the page");
          await job.cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true, captureBeyondViewport: s.fullPage, clip });
          lap('for comparison: CDP captureScreenshot, optimizeForSpeed');
          const chromiumPng = await job.page.screenshot({ fullPage: s.fullPage, type: 'png' });
          lap("for comparison: playwright screenshot (Chromium's own PNG)");
          void chromiumPng;
        } finally {
          traffic.dispose();
          await job.context.close();
          lap('close context');
        }
      }
    }
  } finally {
    await browser.close();
    await fixtures.close();
  }
  console.log(`median ms over ${rounds} rounds`);
  for (const [key, values] of times) {
    const [page, step] = key.split('\t');
    console.log(`${page.padEnd(11)} ${step.padEnd(58)} ${String(Math.round(quantile(values, 0.5))).padStart(6)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
