import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processTree } from '../../bench/process-tree.js';
import { startFixtureServer, type FixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, waitForJob, type TestServer } from '../helpers/test-server.js';

const NAVIGATION_TIMEOUT_MS = 4000;
const CAPTURE_TIMEOUT_MS = 4000;
/** Memory one page may use (SCREENSHOT_PAGE_MEMORY_MB), low so the hog below meets it in about two seconds. */
const PAGE_MEMORY_MB = 512;
/** A failed job must end within its time-outs plus this much (closing a hung page, relaunching). */
const SLACK_MS = 15_000;

let server: TestServer;
let fixtures: FixtureServer;
let key: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
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

/** The browsers this test process launched: Chromium main processes whose parent is us. */
function ourBrowsers(): number[] {
  return processTree(process.pid)
    .filter((p) => p.ppid === process.pid && /chrom/i.test(p.comm))
    .map((p) => p.pid);
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
  it('is stopped once it passes the memory limit, well within its time-out, and the next job succeeds', async () => {
    // A megabyte at a time, a million times over: only the limit (or, failing it, the time-out) stops it.
    const { job, elapsed } = await capture({ url: `${fixtures.url}/memory-hog.html?mb=1000000` });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(new RegExp(`^The page used more than ${PAGE_MEMORY_MB} MiB of memory and was stopped`));
    expect(elapsed).toBeLessThan(NAVIGATION_TIMEOUT_MS + CAPTURE_TIMEOUT_MS);
    await expectNextJobSucceeds();
  });
});

describe('Chromium killed in the middle of a capture', () => {
  it('retries the job, which completes, and the next job succeeds', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/tall.html?h=14000`, full_page: true });
    const { job_id } = await res.json();
    const deadline = Date.now() + 30_000;
    let record = await server.srv.services.jobs.find(job_id);
    while (record?.status !== 'processing' || record.progress < 40) {
      if (Date.now() > deadline) throw new Error(`job never reached the capture: ${record?.status}`);
      await new Promise((r) => setTimeout(r, 20));
      record = await server.srv.services.jobs.find(job_id);
    }
    const browsers = ourBrowsers();
    expect(browsers.length).toBeGreaterThan(0);
    for (const pid of browsers) process.kill(pid, 'SIGKILL');

    const job = await waitForJob(server, key, job_id, 90_000);
    expect(job.status).toBe('completed');
    expect((await server.srv.services.jobs.find(job_id))?.attempts).toBe(2);
    await expectNextJobSucceeds();
  });
});
