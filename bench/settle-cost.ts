// What `wait_until: settled` costs against `load`: the same pages captured by one in-process
// ChromiumEngine, one at a time, the two readiness modes taking turns page by page, round after
// round, in one run. The documentation mix (real pages of the corpus) and the fixture mix are the
// static pages, where settled may cost at most 10 % more per capture; the live app fixtures and
// the real apps of the apps corpus (bench/apps-mix.ts) say how long settled waited. `npm run bench:settle -- [--rounds N] [--chromium PATH]`; `npm run
// bench` runs it too, after its own tables.
import { parseArgs } from 'node:util';

import type { WaitUntil } from '../server/capture/capture-options.js';
import { ChromiumEngine } from '../server/capture/chromium/chromium-engine.js';
import type { CaptureRequest } from '../server/capture/engine.js';
import { startFixtureServer } from '../test/fixtures/fixture-server.js';
import { startLiveAppServer } from '../test/fixtures/live-app-pages.js';
import { corpusRoot, startCorpusServer } from '../test/helpers/corpus.js';
import { startAppsMix } from './apps-mix.js';
import { corpusMix } from './corpus-mix.js';
import { DEFAULT_CHROMIUM_PATH, MIX, type Scenario } from './scenarios.js';
import { quantile } from './stats.js';

/** One page's medians under both modes, and what settled found. */
export interface SettleCost {
  mix: string;
  page: string;
  loadMs: number;
  settledMs: number;
  /** settled / load. */
  ratio: number;
  warnings: string[];
}

const LIVE_PAGES = ['/live/dashboard.html', '/live/streams.html', '/live/long-poll.html', '/live/clock.html'];

/** Measures every page of the mixes given, `rounds` times each mode. */
export async function measureSettleCost(chromium: string, rounds: number, withCorpus: boolean): Promise<SettleCost[]> {
  const fixtures = await startFixtureServer();
  const live = await startLiveAppServer();
  const corpus = withCorpus ? await startCorpusServer(corpusRoot()) : null;
  // The real apps of the apps corpus (Prometheus, Netdata, Transmission, DokuWiki), when installed.
  const apps = await startAppsMix();
  if (apps.skipped.length > 0) console.log(`apps left out: ${apps.skipped.join('; ')}`);
  const engine = new ChromiumEngine({ executablePath: chromium });
  await engine.start();
  try {
    const mixes: Array<{ mix: string; base: string; pages: Scenario[] }> = [
      { mix: 'fixtures', base: fixtures.url, pages: MIX },
      ...(corpus ? [{ mix: 'documentation', base: corpus.url, pages: corpusMix() }] : []),
      { mix: 'live apps', base: live.url, pages: LIVE_PAGES.map((path) => ({ ...MIX[0]!, name: path.slice(6, -5), path })) },
      ...apps.mixes,
    ];
    const costs: SettleCost[] = [];
    for (const { mix, base, pages } of mixes) {
      for (const page of pages) {
        const times: Record<'load' | 'settled', number[]> = { load: [], settled: [] };
        let warnings: string[] = [];
        const capture = async (waitUntil: WaitUntil) => {
          const request: CaptureRequest = {
            url: base + page.path,
            preset: page.preset,
            fullPage: page.fullPage,
            googlebot: false,
            format: 'png',
            maxHeight: 16_384,
            navigationTimeoutMs: 30_000,
            captureTimeoutMs: 30_000,
            maxSourceBytes: 5_000_000,
            options: { waitUntil },
          };
          const started = performance.now();
          const result = await engine.capture(request);
          times[waitUntil as 'load' | 'settled'].push(performance.now() - started);
          if (waitUntil === 'settled') warnings = result.warnings.map((w) => w.code);
        };
        // One of each first, unmeasured: the page's files in the cache for both.
        await capture('load');
        await capture('settled');
        times.load = [];
        times.settled = [];
        for (let round = 0; round < rounds; round++) {
          for (const mode of round % 2 ? (['settled', 'load'] as const) : (['load', 'settled'] as const)) await capture(mode);
        }
        const loadMs = quantile(times.load, 0.5);
        const settledMs = quantile(times.settled, 0.5);
        costs.push({ mix, page: page.name, loadMs, settledMs, ratio: settledMs / loadMs, warnings });
      }
    }
    return costs;
  } finally {
    await engine.close();
    await apps.stop();
    await corpus?.close();
    await live.close();
    await fixtures.close();
  }
}

/** The table, and per mix the ratio of the summed medians. */
export function printSettleCost(costs: SettleCost[]): void {
  console.log('\nwait_until settled against load (in-process engine, one at a time, medians):');
  console.log('| mix | page | load ms | settled ms | settled/load | settled warnings |');
  console.log('|---|---|---|---|---|---|');
  for (const c of costs) {
    console.log(`| ${c.mix} | ${c.page} | ${Math.round(c.loadMs)} | ${Math.round(c.settledMs)} | ${c.ratio.toFixed(2)} | ${c.warnings.join(', ') || '—'} |`);
  }
  for (const mix of [...new Set(costs.map((c) => c.mix))]) {
    const of = costs.filter((c) => c.mix === mix);
    const load = of.reduce((sum, c) => sum + c.loadMs, 0);
    const settled = of.reduce((sum, c) => sum + c.settledMs, 0);
    console.log(`settled/load on ${mix}: ${(settled / load).toFixed(3)} (${Math.round(settled)} ms against ${Math.round(load)} ms, summed medians)`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, chromium: { type: 'string', default: DEFAULT_CHROMIUM_PATH }, 'skip-corpus': { type: 'boolean', default: false } } });
  printSettleCost(await measureSettleCost(values.chromium!, Number(values.rounds), !values['skip-corpus']));
}
