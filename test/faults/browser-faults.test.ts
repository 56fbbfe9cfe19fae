import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { browserProcesses, processTree } from '../../bench/process-tree.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { withSettings } from '../helpers/with-settings.js';

const NAVIGATION_TIMEOUT_MS = 4000;
const CAPTURE_TIMEOUT_MS = 4000;
/** Memory one page may use (SCREENSHOT_PAGE_MEMORY_MB), low so the hog below meets it in about two seconds. */
const PAGE_MEMORY_MB = 512;
/** A failed job must end within its time-outs plus this much (closing a hung page, relaunching). */
const SLACK_MS = 15_000;
/**
 * A time-out far beyond what the test waits for, for tests where the time-out must not be what
 * ends the capture: a slow machine then makes the test slower, never different.
 */
const FAR_OFF_MS = 30_000;

/** Memory the page below holds, so that its renderer is the one above RENDERER_FOUND_BYTES. */
const HEAVY_PAGE_MB = 256;
const RENDERER_FOUND_BYTES = 200 * 2 ** 20;

let server: TestServer;
let fixtures: FixtureServer;
/** Serves /heavy.html: holds HEAVY_PAGE_MB at once, and its one image is held until released (`/held`). */
let heavy: http.Server;
let heavyUrl: string;
let key: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  heavy = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
    res.end(
      '<!doctype html><title>Heavy and slow</title><script>window.keep=[];' +
        `for(let i=0;i<${HEAVY_PAGE_MB};i++){const b=new Uint8Array(1048576);b.fill(i&255);keep.push(b)}</script>` +
        `<p>loading</p><img src="${fixtures.url}/held?name=heavy" width="10" height="10">`,
    );
  });
  await new Promise<void>((resolve) => heavy.listen(0, '127.0.0.1', resolve));
  heavyUrl = `http://127.0.0.1:${(heavy.address() as AddressInfo).port}`;
  server = await startTestServer({
    navigationTimeoutMs: NAVIGATION_TIMEOUT_MS,
    captureTimeoutMs: CAPTURE_TIMEOUT_MS,
    ratePerSecond: 1000,
    pageMemoryMb: PAGE_MEMORY_MB,
  });
  ({ key } = await server.account());
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  heavy?.closeAllConnections();
  await new Promise<void>((resolve) => (heavy ? heavy.close(() => resolve()) : resolve()));
});

async function capture(body: Record<string, unknown>) {
  const res = await server.v1('POST', '/screenshot', key, body);
  expect(res.status).toBe(201);
  const { job_id } = await res.json();
  const started = Date.now();
  const job = await waitForJob(server, key, job_id, 90_000);
  return { job, elapsed: Date.now() - started, record: await server.srv.services.jobs.find(job_id) };
}

async function expectNextJobSucceeds() {
  const { job } = await capture({ url: `${fixtures.url}/small.html` });
  expect(job.status).toBe('completed');
  const image = await fetch(job.screenshot_url);
  expect(image.status).toBe(200);
}

/** What `look` finds, once it finds something. */
async function found<T>(what: string, look: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let thing = look(); ; thing = look()) {
    if (thing !== undefined) return thing;
    if (Date.now() > deadline) throw new Error(`${what} never showed up`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The browsers this test process launched: Chromium main processes (under their pipe guards). */
function ourBrowsers(): number[] {
  return browserProcesses(process.pid);
}

/** Renderer processes of our browsers, with their resident memory. */
function ourRenderers(): Array<{ pid: number; rssBytes: number }> {
  return processTree(process.pid).flatMap((p) => {
    try {
      if (!fs.readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').includes('--type=renderer')) return [];
      const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'latin1'))?.[1];
      return [{ pid: p.pid, rssBytes: Number(kb ?? 0) * 1024 }];
    } catch {
      return []; // exited meanwhile
    }
  });
}

describe('pages that never finish', () => {
  it.each([
    ['a page that never answers', '/hang'],
    ['a page in an endless script loop', '/loop.html'],
  ])('fails %s within its time-out, and the next job succeeds', async (_what, page) => {
    const { job, elapsed } = await capture({ url: `${fixtures.url}${page}` });
    expect(job.status).toBe('failed');
    expect(job.error).toEqual(expect.any(String));
    expect(job.error).not.toMatch(/unexpectedly/);
    expect(elapsed).toBeLessThan(NAVIGATION_TIMEOUT_MS + CAPTURE_TIMEOUT_MS + SLACK_MS);
    await expectNextJobSucceeds();
  });
});

describe('a page that allocates memory without end', () => {
  it('is stopped by the memory limit before its time-out, and the next job succeeds', async () => {
    // A megabyte at a time, a million times over: only the limit (or, failing it, the time-out)
    // stops it. The message says which did; the time-out is far off so that a slow machine,
    // reaching the limit later than the usual two seconds, still tells the limit apart.
    await withSettings(server, { capture_timeout_ms: FAR_OFF_MS }, async () => {
      const { job } = await capture({ url: `${fixtures.url}/memory-hog.html?mb=1000000` });
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(new RegExp(`^The page used more than ${PAGE_MEMORY_MB} MiB of memory and was stopped`));
    });
    await expectNextJobSucceeds();
  });
});

describe('Chromium killed in the middle of a capture', () => {
  it('retries the job, which completes, and the next job succeeds', async () => {
    // The page's image is held until the browsers are dead, and the page is not captured without
    // it before the (far off) navigation time-out: the first attempt is loading when they are killed.
    await withSettings(server, { navigation_timeout_ms: FAR_OFF_MS }, async () => {
      const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/embed-image.html?src=/held%3Fname%3Dcrash` });
      const { job_id } = await res.json();
      await found("the request for the page's image", () => fixtures.seen('/held?name=crash')[0]);
      const browsers = ourBrowsers();
      expect(browsers.length).toBeGreaterThan(0);
      for (const pid of browsers) process.kill(pid, 'SIGKILL');
      fixtures.release('crash');

      const job = await waitForJob(server, key, job_id, 90_000);
      expect(job.status).toBe('completed');
      expect((await server.srv.services.jobs.find(job_id))?.attempts).toBe(2);
    });
    await expectNextJobSucceeds();
  });
});

describe("a page's renderer killed from outside", () => {
  it('retries the job as after a browser crash, and it completes on its second attempt', async () => {
    // As above: the page is loading its held image when its renderer is killed.
    await withSettings(server, { navigation_timeout_ms: FAR_OFF_MS }, async () => {
      const res = await server.v1('POST', '/screenshot', key, { url: `${heavyUrl}/heavy.html` });
      const { job_id } = await res.json();
      // The page's renderer is the one holding its memory.
      const victim = await found("the page's renderer", () => ourRenderers().find((r) => r.rssBytes > RENDERER_FOUND_BYTES));
      process.kill(victim.pid, 'SIGKILL');
      fixtures.release('heavy');

      const job = await waitForJob(server, key, job_id, 90_000);
      expect(job.error).toBeUndefined();
      expect(job.status).toBe('completed');
      expect((await server.srv.services.jobs.find(job_id))?.attempts).toBe(2);
    });
    await expectNextJobSucceeds();
  });
});
