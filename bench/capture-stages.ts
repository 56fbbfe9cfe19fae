// Where a capture's time goes: the capture pipeline's steps, one at a time, with a timestamp
// after each, on the benchmark's pages in ChromiumEngine's job pages. `npx tsc -p tsconfig.json
// && node dist/bench/capture-stages.js [--rounds N] [--chromium PATH]`. Prints the median of each
// step per page; it asserts nothing. The steps are the pipeline's own building blocks, called in
// its order; a fresh context is opened on the spot here, where the engine takes one it prepared
// in advance, and a page that starts requests after load would be waited for again (not these pages).
import { parseArgs } from 'node:util';

import { openJobPage } from '../server/capture/chromium/context-prewarmer.js';
import { scrollThroughPage, settleAndMeasure } from '../server/capture/in-page/page-scripts.js';
import { MainFrame } from '../server/capture/pipeline/main-frame.js';
import { evaluate } from '../server/capture/pipeline/page-driver.js';
import { navigate, preparePage } from '../server/capture/pipeline/page-navigation.js';
import { documentSource, screenshot } from '../server/capture/pipeline/page-screenshot.js';
import { PageTraffic } from '../server/capture/pipeline/page-traffic.js';
import { NETWORK_IDLE_MAX_MS } from '../server/capture/pipeline/quiet-network.js';
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
        const { driver } = job;
        const frame = new MainFrame(driver);
        const traffic = new PageTraffic(driver, frame);
        try {
          await preparePage(driver, frame);
          lap('prepare (CDP events, the lazy-loading watch)');
          await navigate(driver, frame, traffic, `${fixtures.url}${s.path}`, undefined);
          lap('navigate until DOMContentLoaded');
          await frame.until(() => frame.reached('load'));
          lap('until load');
          await traffic.networkIdle(NETWORK_IDLE_MAX_MS, 0);
          lap('requests in flight at load');
          if (s.fullPage) {
            const { steps } = await evaluate(driver, scrollThroughPage, { maxMs: 5000, maxHeight: 16_384, onlyWhenLazy: true });
            lap(`decide to scroll, and scroll (${steps} steps)`);
          }
          const geometry = await evaluate(driver, settleAndMeasure, { waitForFrame: false });
          lap('fonts + measure');
          const height = s.fullPage ? geometry.fullHeight : geometry.viewportHeight;
          const clip = { x: 0, y: 0, width: geometry.viewportWidth, height, scale: s.preset.deviceScaleFactor };
          const shot = { beyondViewport: s.fullPage, frameFallbackMs: 0 };
          const source = documentSource(driver, 5_000_000);
          await screenshot(driver, clip, { ...shot, fast: false });
          await source;
          lap("CDP captureScreenshot (Chromium's PNG), the document's source alongside");
          await documentSource(driver, 5_000_000);
          lap("for comparison: the document's source alone (measured in the page, then DOM.getOuterHTML)");
          await job.page.content();
          lap("for comparison: page.content(), playwright's first call in the page");
          await screenshot(driver, clip, { ...shot, fast: true });
          lap('for comparison: CDP captureScreenshot, optimizeForSpeed');
          const chromiumPng = await job.page.screenshot({ fullPage: s.fullPage, type: 'png' });
          lap("for comparison: playwright screenshot (Chromium's own PNG)");
          void chromiumPng;
        } finally {
          traffic.dispose();
          frame.dispose();
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
