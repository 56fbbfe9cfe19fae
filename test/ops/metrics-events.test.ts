// The counters ServiceMetrics fills from log lines (browser restarts after an exit, hung-browser
// kills, capture crashes, memory-guard kills), each moved by the real event: a rewording of the
// line it listens for fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { browserProcesses } from '../../bench/process-tree.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { withSettings } from '../helpers/with-settings.js';
import { type Family, parsePrometheusText, sumOf } from './prom-text.js';

/** Low, so the memory hog below meets it in about two seconds. */
const PAGE_MEMORY_MB = 512;

let server: TestServer;
let fixtures: FixtureServer;
let key: string;
/** Browsers this file stopped with SIGSTOP, killed in the end should the engine not have. */
const stopped: number[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // A short navigation time-out: the frozen browser below is found out when it runs out.
  server = await startTestServer({ browsers: 1, concurrency: 1, pageMemoryMb: PAGE_MEMORY_MB, navigationTimeoutMs: 4000 });
  ({ key } = await server.account());
});

afterAll(async () => {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await server?.close();
  await fixtures?.close();
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } });
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

/** How much each counter moved while `run` ran. */
async function deltas(run: () => Promise<void>): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape();
  await run();
  const after = await scrape();
  return (name, labels = {}) => sumOf(after, name, labels) - sumOf(before, name, labels);
}

async function post(body: Record<string, unknown>): Promise<string> {
  const res = await server.v1('POST', '/screenshot', key, body);
  expect(res.status).toBe(201);
  return (await res.json()).job_id;
}

/** The browsers this test process launched: Chromium main processes (under their pipe guards). */
function ourBrowsers(): number[] {
  return browserProcesses(process.pid);
}

async function until(what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('counters fed by the engine and the runner', () => {
  it('counts a page renderer the memory guard stopped', async () => {
    const delta = await deltas(async () => {
      const job = await waitForJob(server, key, await post({ url: `${fixtures.url}/memory-hog.html?mb=1000000` }), 60_000);
      expect(job.status).toBe('failed');
    });
    expect(delta('screenshot_page_memory_kills_total')).toBe(1);
    expect(delta('screenshot_browser_hung_kills_total')).toBe(0);
  });

  it('counts a browser killed during a capture as a crash, and its replacement as a restart after an exit', async () => {
    // The page's image is held until the browser is dead, and the page is not captured without it
    // before a far-off navigation time-out: the capture is loading the page when the browser dies.
    const delta = await withSettings(server, { navigation_timeout_ms: 30_000 }, () =>
      deltas(async () => {
        const id = await post({ url: `${fixtures.url}/embed-image.html?src=/held%3Fname%3Dcrash` });
        await until("the request for the page's image", async () => fixtures.seen('/held?name=crash').length > 0);
        const browsers = ourBrowsers();
        expect(browsers.length).toBeGreaterThan(0);
        for (const pid of browsers) process.kill(pid, 'SIGKILL');
        fixtures.release('crash');
        const job = await waitForJob(server, key, id, 90_000);
        expect(job.status, job.error).toBe('completed');
      }),
    );
    expect(delta('screenshot_capture_crashes_total')).toBe(1);
    expect(delta('screenshot_browser_restarts_total', { reason: 'exited' })).toBe(1);
    expect(delta('screenshot_browser_hung_kills_total')).toBe(0);
  });

  it('counts a browser that stopped answering, which the engine killed, and the retry it cost', async () => {
    const delta = await deltas(async () => {
      // A capture first, so the browser is up and idle when it is frozen.
      expect((await waitForJob(server, key, await post({ url: `${fixtures.url}/small.html` }))).status).toBe('completed');
      const browsers = ourBrowsers();
      expect(browsers.length).toBeGreaterThan(0);
      for (const pid of browsers) {
        stopped.push(pid);
        process.kill(pid, 'SIGSTOP');
      }
      expect((await waitForJob(server, key, await post({ url: `${fixtures.url}/small.html` }), 90_000)).status).toBe('completed');
    });
    expect(delta('screenshot_browser_hung_kills_total')).toBe(1);
    expect(delta('screenshot_capture_crashes_total')).toBe(1);
    // The engine finds the frozen browser out after up to 10 s (opening a page) or 4 + 20 s (the
    // navigation time-out, then closing the context), and the retry follows.
  }, 120_000);
});
