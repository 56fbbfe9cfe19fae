// Capture throughput of ChromiumEngine against plain playwright in the same process.
//   npx tsc -p tsconfig.json && node dist/bench/engine-micro.js [rounds]   (CHROMIUM_PATH picks the browser)
// (or `npx jiti bench/engine-micro.ts`). Prints captures per second, CPU time per capture
// (this process, libvips threads included, plus the browser's process group) and ratios.
// CPU time is the figure to trust on a shared machine; it asserts nothing.
import fs from 'node:fs';

import { type Browser, chromium } from 'playwright-core';

import { ChromiumEngine } from '../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../server/capture/chromium/chromium-path.js';
import type { CaptureRequest } from '../server/capture/engine.js';
import { startFixtureServer } from '../test/fixtures/fixture-server.js';
import { contextOptions } from './browser-baselines.js';
import { CHROMIUM_ARGS as ARGS, MIX as SCENARIOS, type Scenario } from './scenarios.js';

const ROUNDS = Number(process.argv[2] ?? 12);

/** One capture the way a script using playwright directly would do it. */
async function playwrightCapture(browser: Browser, url: string, s: Scenario, version: string): Promise<number> {
  const context = await browser.newContext(contextOptions(s, version));
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    const png = await page.screenshot({ fullPage: s.fullPage });
    await page.content();
    return png.length;
  } finally {
    await context.close();
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU milliseconds used so far by the processes of a group, reaped children included. */
function groupCpuMs(pgid: number | undefined): number {
  if (pgid === undefined) return 0;
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[2] is the process group; [11..14] utime, stime, cutime, cstime
      if (Number(fields[2]) !== pgid) continue;
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * TICK_MS;
}

const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function browserPid(browser: Browser): Promise<number | undefined> {
  const session = await browser.newBrowserCDPSession();
  const { processInfo } = await session.send('SystemInfo.getProcessInfo');
  await session.detach();
  return processInfo.find((p) => p.type === 'browser')?.id;
}

interface Measurement {
  perSecond: number;
  bytes: number;
  cpuMs: number;
  /** Of cpuMs, what this process used. */
  nodeCpuMs: number;
}

/** Runs `rounds` captures over `lanes` parallel loops. */
async function measure(rounds: number, lanes: number, one: () => Promise<number>, pgid?: () => number | undefined): Promise<Measurement> {
  let next = 0;
  let bytes = 0;
  const nodeBefore = ownCpuMs();
  const cpuBefore = nodeBefore + groupCpuMs(pgid?.());
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next++ < rounds) bytes += await one();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const nodeCpuMs = ownCpuMs() - nodeBefore;
  const cpuMs = ownCpuMs() + groupCpuMs(pgid?.()) - cpuBefore;
  return { perSecond: rounds / seconds, bytes: bytes / rounds, cpuMs: cpuMs / rounds, nodeCpuMs: nodeCpuMs / rounds };
}

const fmt = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const executablePath = findChromium(process.env.CHROMIUM_PATH);
  const fixture = await startFixtureServer();
  const engine = new ChromiumEngine({ executablePath });
  const browser = await chromium.launch({ executablePath, args: ARGS });
  try {
    await engine.start();
    const version = engine.chromiumVersion();
    const rawPid = await browserPid(browser);
    const enginePid = () => engine.browserPid();
    console.log(`Chromium ${version}, ${ROUNDS} captures per measurement`);
    for (const s of SCENARIOS) {
      const url = fixture.url + s.path;
      const request: CaptureRequest = {
        url,
        preset: s.preset,
        fullPage: s.fullPage,
        googlebot: false,
        format: 'png',
        maxHeight: 16_384,
        navigationTimeoutMs: 30_000,
        captureTimeoutMs: 30_000,
        maxSourceBytes: 5_000_000,
      };
      const ours = () => engine.capture(request).then((r) => r.image.length);
      const raw = () => playwrightCapture(browser, url, s, version);
      const fresh = async () => {
        const own = await chromium.launch({ executablePath, args: ARGS });
        try {
          return await playwrightCapture(own, url, s, version);
        } finally {
          await own.close();
        }
      };
      await ours();
      await raw(); // warm both browsers for this page
      const pw1 = await measure(ROUNDS, 1, raw, () => rawPid);
      const eng1 = await measure(ROUNDS, 1, ours, enginePid);
      const pw2 = await measure(ROUNDS, 2, raw, () => rawPid);
      const eng2 = await measure(ROUNDS, 2, ours, enginePid);
      const perBrowser = await measure(Math.max(3, Math.round(ROUNDS / 3)), 1, fresh);
      const cpu = (m: Measurement) => `${Math.round(m.cpuMs)} ms CPU each (${Math.round(m.nodeCpuMs)} in node)`;
      const row = (label: string, one: Measurement, two?: Measurement) =>
        console.log(
          `  ${label.padEnd(20)} 1 lane ${fmt(one.perSecond)}/s` +
            (two ? `, ${cpu(one)}   2 lanes ${fmt(two.perSecond)}/s, ${cpu(two)}` : '') +
            `   png ${Math.round(one.bytes / 1024)} KiB`,
        );
      console.log(`\n${s.name}`);
      row('playwright loop', pw1, pw2);
      row('new browser/capture', perBrowser);
      row('ChromiumEngine', eng1, eng2);
      console.log(
        `  engine vs playwright: ${fmt(eng1.perSecond / pw1.perSecond)}× (1 lane), ${fmt(eng2.perSecond / pw2.perSecond)}× (2 lanes), ` +
          `${fmt(eng2.perSecond / pw1.perSecond)}× (engine 2 lanes vs playwright 1), CPU ${fmt(pw1.cpuMs / eng1.cpuMs)}× less; ` +
          `vs new browser ${fmt(eng1.perSecond / perBrowser.perSecond)}×; png size ${fmt(eng1.bytes / pw1.bytes)}`,
      );
    }
  } finally {
    await engine.close();
    await browser.close();
    await fixture.close();
  }
}

await main();
