// What a capture's warnings cost: the one-colour check of the picture (capture-warnings.ts) and
// the page-side probe (warning-probe.ts), against the whole capture of the same page, in the
// same process, on the bench's mix (small, a 10,000 px full page, 20 images) plus a mobile page.
//   npx jiti bench/capture-warnings.ts [rounds]   (CHROMIUM_PATH picks the browser)
// Prints milliseconds per capture, per check and per probe, and each check's share of the
// capture. It asserts nothing.
import { type Browser, chromium } from 'playwright-core';

import { ChromiumEngine } from '../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../server/capture/chromium/chromium-path.js';
import { probeArguments, probePage } from '../server/capture/in-page/warning-probe.js';
import { oneColour } from '../server/capture/outputs/capture-warnings.js';
import { PRESETS } from '../server/capture/presets.js';
import { startFixtureServer } from '../test/fixtures/fixture-server.js';
import { CHROMIUM_ARGS, MIX, type Scenario } from './scenarios.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const SCENARIOS: Scenario[] = [...MIX, { name: 'mobile-small', path: '/small.html', preset: PRESETS.mobile, fullPage: false }];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function probeMs(browser: Browser, url: string, s: Scenario): Promise<number> {
  const context = await browser.newContext({ viewport: { width: s.preset.width, height: s.preset.height } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    const area = { x: 0, y: 0, width: s.preset.width, height: s.fullPage ? height : s.preset.height, overlay: true, blocked: [] };
    const started = performance.now();
    await page.evaluate(probePage, probeArguments(area));
    return performance.now() - started;
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const fixture = await startFixtureServer();
  const executablePath = findChromium(process.env.CHROMIUM_PATH);
  const engine = new ChromiumEngine({ executablePath });
  await engine.start();
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    console.log('scenario        capture ms  one-colour ms  share   probe ms  share');
    for (const s of SCENARIOS) {
      const capture: number[] = [];
      const check: number[] = [];
      const probe: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const url = fixture.url + s.path;
        const started = performance.now();
        const result = await engine.capture({
          url,
          preset: s.preset,
          fullPage: s.fullPage,
          googlebot: false,
          format: 'png',
          maxHeight: 16_384,
          navigationTimeoutMs: 30_000,
          captureTimeoutMs: 30_000,
          maxSourceBytes: 5_000_000,
        });
        capture.push(performance.now() - started);
        const checked = performance.now();
        await oneColour(result.image);
        check.push(performance.now() - checked);
        probe.push(await probeMs(browser, url, s));
      }
      const [c, k, p] = [median(capture), median(check), median(probe)];
      console.log(
        `${s.name.padEnd(15)} ${c.toFixed(0).padStart(10)} ${k.toFixed(1).padStart(14)} ${((k / c) * 100).toFixed(1).padStart(5)}% ${p.toFixed(1).padStart(10)} ${((p / c) * 100).toFixed(1).padStart(5)}%`,
      );
    }
  } finally {
    await browser.close();
    await engine.close();
    await fixture.close();
  }
}

await main();
