// The benchmark: the service end to end against the tools people would use instead
// (capture-website, microlink's browserless), a raw playwright-core loop, a new browser per
// capture and the no-isolation floor (pages reused), on the same fixture pages, in one run; then
// a render link served from the result cache against one that captures. Then the same methods
// on a second mix of real pages, the corpus (bench/corpus-mix.ts; scripts/corpus.mjs fetches it),
// unless --skip-corpus. `npm run bench -- [--quick] [--soak N] [--rounds N] [--chromium PATH]
// [--concurrency N,...] [--skip-corpus] [--docs]`. It prints a table per mix, writes
// bench/results/latest.json and bench.svg (with --docs also to docs/img/, for figures being
// published), and ends with the ratio lines, real pages first, then wait_until settled against
// load (settle-cost.ts).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import type { Browser } from 'playwright-core';

import { DEFAULTS } from '../server/config.js';
import { startFixtureServer } from '../test/fixtures/fixture-server.js';
import { corpusRoot, startCorpusServer } from '../test/helpers/corpus.js';
import { contextOptions, launch, newBrowserCapture, rawCapture, reusedPageCapture } from './browser-baselines.js';
import { benchmarkChart, soakChart, type SoakSample } from './chart.js';
import { corpusMix } from './corpus-mix.js';
import { compareImages, type ImageComparison } from './image-check.js';
import { busyCpuMs, describeMachine, type MachineInfo } from './machine.js';
import { ReusedPages, startPeers } from './peer-tools.js';
import { browsersPss, snapshotTree } from './process-tree.js';
import { measureRenderLinks } from './render-links.js';
import { DEFAULT_CHROMIUM_PATH, MIX, type Scenario, scenarioAt } from './scenarios.js';
import { type ServiceUnderTest, startService } from './service-client.js';
import { measureSettleCost, printSettleCost } from './settle-cost.js';
import { closedLoop, type LoopResult, quantile, type RunSummary, summarise } from './stats.js';

const MiB = 2 ** 20;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    /** Copy the charts to docs/img/ as well: only for a run whose figures go into the docs. */
    docs: { type: 'boolean', default: false },
    soak: { type: 'string' },
    rounds: { type: 'string' },
    /** More concurrency levels to measure, besides 1, 2 and the service's default: "3" or "3,4". */
    concurrency: { type: 'string' },
    chromium: { type: 'string', default: DEFAULT_CHROMIUM_PATH },
    /** Leave out the real-page mix (the corpus). */
    'skip-corpus': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
  },
});

const chromiumPath = flags.chromium!;
const rounds = Number(flags.rounds ?? (flags.quick ? 1 : 8));
/** Rounds of the mix a method captures before the next method takes its turn. */
const ROUNDS_PER_TURN = 2;
const soakCaptures = flags.soak === undefined ? 0 : Number(flags.soak);
const perRun = rounds * MIX.length;
const idleSamples = flags.quick ? 5 : 15;
const extraLevels = (flags.concurrency ?? '').split(',').filter(Boolean).map(Number);
if (extraLevels.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new Error('--concurrency takes whole numbers from 1 to 64, separated by commas');
const levels = [...new Set([1, 2, DEFAULTS.concurrency, ...extraLevels])].sort((a, b) => a - b);

/**
 * Samples memory while a run goes on: a service's whole process tree, or (`browsersOnly`) just
 * the browsers this process launched itself, for the raw and new-browser baselines. `stop`
 * returns the peak and the CPU the sampling itself took (reading /proc is not free), which is
 * left out of the method's CPU.
 */
function memorySampler(pid: number, browsersOnly: boolean) {
  let peak = 0;
  let ownCpuUs = 0;
  const take = () => {
    const before = process.cpuUsage();
    if (browsersOnly) peak = Math.max(peak, browsersPss(pid));
    else {
      const s = snapshotTree(pid);
      peak = Math.max(peak, s.rss + s.childrenPss);
    }
    const used = process.cpuUsage(before);
    ownCpuUs += used.user + used.system;
  };
  take();
  const timer = setInterval(take, 200);
  return () => {
    clearInterval(timer);
    take();
    return { peak, samplingCpuMs: ownCpuUs / 1000 };
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

function perScenario(samples: LoopResult['samples'], mix: Scenario[]): Record<string, number> {
  return Object.fromEntries(
    mix.map((s, k) => [s.name, Math.round(quantile(samples.filter((x) => x.index % mix.length === k).map((x) => x.ms), 0.5))]),
  );
}

interface Method {
  name: string;
  pid: number;
  browsersOnly: boolean;
  capture: (index: number) => Promise<unknown>;
}

/**
 * Every method at one concurrency, in turns of a few rounds of the mix each (service, raw,
 * new-browser, service, ...), so that other work on the machine during the run weighs on
 * all three alike. A method's throughput is its captures over the time of its own turns.
 */
async function measureLevel(level: number, methods: Method[], mix: Scenario[] = MIX) {
  const captures = rounds * mix.length;
  const turns = Math.max(1, Math.round(rounds / ROUNDS_PER_TURN));
  const perTurn = Math.ceil(captures / turns);
  const acc = methods.map(() => ({ samples: [] as LoopResult['samples'], errors: [] as string[], seconds: 0, peak: 0, cpuMs: 0 }));
  for (let turn = 0; turn < turns; turn++) {
    for (const [m, method] of methods.entries()) {
      const cpuBefore = busyCpuMs();
      const stop = memorySampler(method.pid, method.browsersOnly);
      const offset = turn * perTurn;
      const result = await closedLoop(Math.min(perTurn, captures - offset), level, async (i) => void (await method.capture(offset + i)));
      const a = acc[m];
      a.samples.push(...result.samples.map((x) => ({ index: offset + x.index, ms: x.ms })));
      a.errors.push(...result.errors);
      a.seconds += result.seconds;
      const sampled = stop();
      a.cpuMs += busyCpuMs() - cpuBefore - sampled.samplingCpuMs;
      a.peak = Math.max(a.peak, sampled.peak);
    }
  }
  return methods.map((method, m) => {
    const a = acc[m];
    const summary = summarise(method.name, level, a.samples.map((x) => x.ms), a.errors.length, a.seconds, a.peak, a.cpuMs, os.cpus().length);
    if (a.errors.length) log(`  ${method.name} c=${level}: ${a.errors.length} failure(s), first: ${a.errors[0]}`);
    log(
      `  ${method.name} c=${level}: ${summary.capturesPerSecond.toFixed(2)} captures/s, p50 ${Math.round(summary.p50Ms)} ms, ` +
        `CPU ${Math.round(summary.cpuMsPerCapture)} ms per capture, cores ${Math.round(summary.cpuBusyShare * 100)} % busy`,
    );
    return { summary, scenarios: perScenario(a.samples, mix) };
  });
}

async function soakRun(service: ServiceUnderTest, url: (i: number) => string): Promise<SoakSample[]> {
  log(`soak: ${soakCaptures} captures at concurrency ${DEFAULTS.concurrency}`);
  const samples: SoakSample[] = [];
  const sample = (captures: number) => {
    const s = snapshotTree(service.pid);
    samples.push({
      captures,
      serverRssMiB: Math.round(s.rss / MiB),
      browsersPssMiB: Math.round(s.childrenPss / MiB),
      serverFds: s.fds,
      processes: s.processes,
    });
  };
  sample(0);
  let done = 0;
  const every = Math.max(5, Math.round(soakCaptures / 50));
  const result = await closedLoop(soakCaptures, DEFAULTS.concurrency, async (i) => {
    await service.capture(url(i), scenarioAt(i));
    if (++done % every === 0) sample(done);
  });
  sample(done);
  if (result.failures) log(`  soak: ${result.failures} failure(s), first: ${result.errors[0]}`);
  log(`  soak: ${(soakCaptures / result.seconds).toFixed(2)} captures/s`);
  return samples;
}

/**
 * The small page on an idle service against goto + screenshot on a page kept open,
 * alternating one of each so both see the same machine.
 */
async function idleLatency(service: ServiceUnderTest, browser: Browser, url: string) {
  await service.setConcurrency(DEFAULTS.concurrency);
  const context = await browser.newContext(contextOptions(MIX[0], browser.version()));
  try {
    const page = await context.newPage();
    await reusedPageCapture(page, url);
    const serviceMs: number[] = [];
    const reusedMs: number[] = [];
    for (let i = 0; i < idleSamples; i++) {
      let t0 = performance.now();
      await service.capture(url, MIX[0]);
      serviceMs.push(performance.now() - t0);
      t0 = performance.now();
      await reusedPageCapture(page, url);
      reusedMs.push(performance.now() - t0);
    }
    return { serviceSmallP50: quantile(serviceMs, 0.5), reusedSmallP50: quantile(reusedMs, 0.5) };
  } finally {
    await context.close();
  }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/** The service's throughput over each other method's, at each concurrency measured. */
function ratiosOf(runs: RunSummary[]) {
  const at = (method: string, level: number) => runs.find((r) => r.method === method && r.concurrency === level)!;
  const over = (method: string, level: number) => ratio(at('service', level).capturesPerSecond, at(method, level).capturesPerSecond);
  return Object.fromEntries(
    levels.map((level) => [
      `c${level}`,
      {
        serviceOverRaw: over('raw', level),
        serviceOverNewBrowser: over('new-browser', level),
        serviceOverCaptureWebsite: over('capture-website', level),
        serviceOverBrowserless: over('browserless', level),
        serviceOverFloor: over('floor', level),
      },
    ]),
  );
}

function ratioLine(r: ReturnType<typeof ratiosOf>[string]): string {
  return (
    `service/raw=${fmt(r.serviceOverRaw)} service/new-browser=${fmt(r.serviceOverNewBrowser)} ` +
    `service/capture-website=${fmt(r.serviceOverCaptureWebsite)} service/browserless=${fmt(r.serviceOverBrowserless)} ` +
    `service/floor=${fmt(r.serviceOverFloor)}`
  );
}

function printTable(runs: RunSummary[]) {
  const rows = runs.map((r) => [
    r.method,
    String(r.concurrency) + (r.concurrency === DEFAULTS.concurrency && r.method === 'service' ? ' (default)' : ''),
    String(r.captures),
    fmt(r.capturesPerSecond),
    String(Math.round(r.p50Ms)),
    String(Math.round(r.p95Ms)),
    String(Math.round(r.peakRssBytes / MiB)),
    String(Math.round(r.cpuMsPerCapture)),
    String(Math.round(r.cpuBusyShare * 100)),
  ]);
  const header = ['method', 'concurrency', 'captures', 'captures/s', 'p50 ms', 'p95 ms', 'peak MiB', 'CPU ms/capture', 'cores busy %'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

async function main() {
  const machine: MachineInfo = describeMachine(chromiumPath);
  log(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, ${machine.chromium}, Node ${machine.node}, load ${fmt(machine.loadAtStart)}`);
  log(`mix: ${MIX.map((s) => s.name).join(', ')}; ${perRun} captures per run; concurrency ${levels.join(', ')}`);
  const started = Date.now();
  // Read first, so that a missing corpus stops the run before it measures anything.
  const realMix = flags['skip-corpus'] ? [] : corpusMix();
  if (realMix.length > 0) corpusRoot();
  const fixtures = await startFixtureServer();
  const url = (i: number) => `${fixtures.url}${scenarioAt(i).path}`;
  log('starting the service (the headless server in its own process) and a warm Chromium for the raw loop');
  const service = await startService({ chromiumPath });
  const browser = await launch(chromiumPath);
  const peers = await startPeers(chromiumPath, browser.version());
  const floor = new ReusedPages(browser);
  try {
    // The first capture of each page by each side: warms both up and gives the images to compare.
    const images: ImageComparison[] = [];
    for (let k = 0; k < MIX.length; k++) {
      images.push(await compareImages(MIX[k].name, await service.capture(url(k), MIX[k]), await rawCapture(browser, url(k), MIX[k])));
    }
    /** Every method on one mix of pages, served from `base`. */
    const methodsFor = (mix: Scenario[], base: string): Method[] => {
      const at = (i: number) => mix[i % mix.length];
      const to = (i: number) => `${base}${at(i).path}`;
      return [
        { name: 'service', pid: service.pid, browsersOnly: false, capture: (i) => service.capture(to(i), at(i)) },
        { name: 'raw', pid: process.pid, browsersOnly: true, capture: (i) => rawCapture(browser, to(i), at(i)) },
        { name: 'new-browser', pid: process.pid, browsersOnly: true, capture: (i) => newBrowserCapture(chromiumPath, to(i), at(i)) },
        { name: 'capture-website', pid: process.pid, browsersOnly: true, capture: (i) => peers.captureWebsite(to(i), at(i)) },
        { name: 'browserless', pid: process.pid, browsersOnly: true, capture: (i) => peers.browserless(to(i), at(i)) },
        { name: 'floor', pid: process.pid, browsersOnly: true, capture: (i) => floor.capture(to(i), at(i)) },
      ];
    };
    const all: Array<{ summary: RunSummary; scenarios: Record<string, number> }> = [];
    for (const level of levels) {
      await service.setConcurrency(level);
      all.push(...(await measureLevel(level, methodsFor(MIX, fixtures.url))));
    }
    // The same methods on real pages: documentation from Debian's packages (the corpus).
    const real: typeof all = [];
    if (realMix.length > 0) {
      const corpus = await startCorpusServer();
      try {
        log(`real pages: ${realMix.map((s) => s.name).join(', ')}; ${rounds * realMix.length} captures per run`);
        for (const level of levels) {
          await service.setConcurrency(level);
          real.push(...(await measureLevel(level, methodsFor(realMix, corpus.url), realMix)));
        }
      } finally {
        await corpus.close();
      }
    }
    const idle = await idleLatency(service, browser, url(0));
    log(`  idle small page: service p50 ${Math.round(idle.serviceSmallP50)} ms, reused page p50 ${Math.round(idle.reusedSmallP50)} ms`);
    log('render links: captured on every load, then served from the result cache');
    const render = await measureRenderLinks({ admin: service.admin, pageUrl: url(0), uncached: flags.quick ? 3 : 10, hits: flags.quick ? 20 : 80 });
    const durations = await service.jobDurations();
    const serverSide = Object.fromEntries(
      MIX.map((s) => [s.name, Math.round(quantile(durations.filter((d) => d.url.endsWith(s.path)).map((d) => d.durationMs), 0.5))]),
    );
    await floor.close();
    await peers.close();
    await browser.close();
    const soak = soakCaptures > 0 ? await soakRun(service, url) : [];
    machine.loadAtEnd = os.loadavg()[0];

    const runs = all.map((r) => r.summary);
    const realRuns = real.map((r) => r.summary);
    const ratios = ratiosOf(runs);
    const realRatios = realRuns.length > 0 ? ratiosOf(realRuns) : undefined;
    const headline = ratios[`c${DEFAULTS.concurrency}`];
    const latencyRatio = ratio(idle.serviceSmallP50, idle.reusedSmallP50);
    const targets = {
      serviceOverRawAtC1: { target: 1.5, measured: ratios.c1.serviceOverRaw },
      serviceOverRawAtC2: { target: 1.5, measured: ratios.c2.serviceOverRaw },
      serviceOverNewBrowser: { target: 4, measured: headline.serviceOverNewBrowser },
      idleSmallLatencyOverReusedPage: { target: 2, measured: latencyRatio, lowerIsBetter: true },
      serviceOverCaptureWebsiteAtC2: { target: 1.5, measured: ratios.c2.serviceOverCaptureWebsite },
      serviceOverBrowserlessAtC2: { target: 1.5, measured: ratios.c2.serviceOverBrowserless },
      serviceOverFloorAtC2: { target: 0.75, measured: ratios.c2.serviceOverFloor },
      renderLinkHitP50Ms: { target: 20, measured: render.hitP50, lowerIsBetter: true },
    };

    console.log('');
    printTable(runs);
    console.log('');
    console.log('p50 ms per page:');
    for (const r of all) console.log(`  ${r.summary.method.padEnd(12)} c=${r.summary.concurrency}  ${Object.entries(r.scenarios).map(([k, v]) => `${k} ${v}`).join('  ')}`);
    console.log(`  service, inside the server (capture start to stored): ${Object.entries(serverSide).map(([k, v]) => `${k} ${v}`).join('  ')}`);
    if (real.length > 0) {
      console.log('');
      console.log(`real pages (the corpus: ${realMix.map((s) => `${s.name} ${s.preset.device}${s.fullPage ? ' full page' : ''}`).join(', ')}):`);
      printTable(realRuns);
      console.log('p50 ms per real page:');
      for (const r of real) console.log(`  ${r.summary.method.padEnd(12)} c=${r.summary.concurrency}  ${Object.entries(r.scenarios).map(([k, v]) => `${k} ${v}`).join('  ')}`);
    }
    console.log('');
    console.log(`idle small page: service p50 ${Math.round(idle.serviceSmallP50)} ms, goto+screenshot on a reused page p50 ${Math.round(idle.reusedSmallP50)} ms (ratio ${fmt(latencyRatio)})`);
    console.log(
      `render link: capturing on every load p50 ${Math.round(render.uncachedP50)} ms, served from the cache p50 ${fmt(render.hitP50, 1)} ms ` +
        `(p95 ${fmt(render.hitP95, 1)} ms, ${render.hits} loads; ${fmt(render.speedup, 0)}× faster)`,
    );
    for (const img of images) {
      console.log(
        `image ${img.scenario}: ${img.width}x${img.height}, ${img.sameSize ? `${fmt(img.differingPixels * 100, 3)}% pixels differ` : 'DIFFERENT SIZE'}, ` +
          `service ${Math.round(img.serviceBytes / 1024)} KiB vs raw ${Math.round(img.rawBytes / 1024)} KiB (x${fmt(img.sizeRatio)})`,
      );
    }
    for (const [name, t] of Object.entries(targets)) {
      const met = 'lowerIsBetter' in t ? t.measured <= t.target : t.measured >= t.target;
      console.log(`target ${name}: ${fmt(t.measured)} (${'lowerIsBetter' in t ? '≤' : '≥'} ${t.target}) ${met ? 'met' : 'MISSED'}`);
    }
    if (soak.length) {
      const first = soak[1] ?? soak[0];
      const last = soak[soak.length - 1];
      console.log(
        `soak ${last.captures} captures: service RSS ${first.serverRssMiB} -> ${last.serverRssMiB} MiB, browsers ${first.browsersPssMiB} -> ${last.browsersPssMiB} MiB, ` +
          `fds ${first.serverFds} -> ${last.serverFds}, processes ${first.processes} -> ${last.processes}`,
      );
    }

    const outDir = path.resolve(flags.out!);
    await fs.mkdir(outDir, { recursive: true });
    const caption = `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.chromium}, ${perRun} captures per bar (small, 10,000 px full page, 20 images)`;
    const chart = benchmarkChart(runs, caption);
    await fs.writeFile(path.join(outDir, 'bench.svg'), chart);
    const soakCaption = `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.chromium}; the mix at concurrency ${DEFAULTS.concurrency}, browsers recycled every ${DEFAULTS.recycleAfter} captures`;
    if (soak.length) await fs.writeFile(path.join(outDir, 'soak.svg'), soakChart(soak, soakCaption));
    await fs.writeFile(
      path.join(outDir, 'latest.json'),
      `${JSON.stringify(
        {
          at: new Date(started).toISOString(),
          seconds: Math.round((Date.now() - started) / 1000),
          machine,
          mix: MIX.map((s) => ({ name: s.name, path: s.path, preset: s.preset.name, fullPage: s.fullPage })),
          runs,
          perScenarioP50Ms: all.map((r) => ({ method: r.summary.method, concurrency: r.summary.concurrency, ...r.scenarios })),
          serviceServerSideP50Ms: serverSide,
          idle: { serviceSmallP50Ms: idle.serviceSmallP50, reusedPageSmallP50Ms: idle.reusedSmallP50 },
          renderLinks: render,
          ratios,
          targets,
          images,
          soak,
          realPages: realRatios && {
            mix: realMix.map((s) => ({ name: s.name, path: s.path, preset: s.preset.name, fullPage: s.fullPage })),
            runs: realRuns,
            perScenarioP50Ms: real.map((r) => ({ method: r.summary.method, concurrency: r.summary.concurrency, ...r.scenarios })),
            ratios: realRatios,
          },
        },
        null,
        2,
      )}\n`,
    );
    if (flags.docs) {
      const docsImg = path.resolve('docs/img');
      await fs.mkdir(docsImg, { recursive: true });
      await fs.copyFile(path.join(outDir, 'bench.svg'), path.join(docsImg, 'bench.svg'));
      if (soak.length) await fs.copyFile(path.join(outDir, 'soak.svg'), path.join(docsImg, 'soak.svg'));
    }
    console.log(`results: ${path.join(outDir, 'latest.json')}, chart: ${path.join(outDir, 'bench.svg')}`);
    if (realRatios) console.log(`ratio on real pages ${ratioLine(realRatios[`c${DEFAULTS.concurrency}`])}`);
    console.log(`ratio ${ratioLine(headline)}`);
  } finally {
    await floor.close().catch(() => undefined);
    await peers.close().catch(() => undefined);
    await browser.close().catch(() => undefined);
    await service.close();
    await fixtures.close();
  }
  // After everything else, on a browser of its own: what wait_until settled costs against load.
  printSettleCost(await measureSettleCost(chromiumPath, flags.quick ? 3 : 5, realMix.length > 0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
