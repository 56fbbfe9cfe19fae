import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { clearOfMidnight } from '../helpers/clear-of-midnight.js';
import { serve, type ServeProcess } from '../helpers/cli-process.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

// The real server process with its data directory on a small tmpfs. A promise rejection
// nobody handles ends a Node process, so "the process is still up" also proves none happened.

let fixtures: FixtureServer;
let disk: Tmpfs | undefined;
let server: ServeProcess | undefined;
let token = '';
let key = '';
const output: string[] = [];

// Its tests count calls across restarts of one server: the whole file runs on one UTC day.
beforeAll(() => clearOfMidnight(2 * 60_000), 2 * 60_000 + 5_000);

beforeAll(async () => {
  fixtures = await startFixtureServer();
  const mounted = await mountTmpfs('4m', 'sa-disk-full-');
  if (typeof mounted === 'string') console.warn(`skipping the full-disk tests: ${mounted}`);
  else disk = mounted;
});

afterAll(async () => {
  await stop();
  await disk?.unmount();
  await fixtures?.close();
});

async function start(): Promise<ServeProcess> {
  const proc = await serve(['--data', disk!.dir, '--egress-allow', '127.0.0.1/32', '--browsers', '1']);
  server = proc;
  token = (await fs.readFile(path.join(disk!.dir, 'admin-token'), 'utf8')).trim();
  return proc;
}

async function stop(): Promise<number | null> {
  const proc = server;
  server = undefined;
  if (!proc) return null;
  if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
  const code = await proc.exited;
  output.push(proc.stderr());
  return code;
}

const DB_FILES = ['jobs.db', 'usage.db', 'accounts.db', 'keys.db', 'webhooks.db', 'settings.db'];
const dbFile = (name: string) => path.join(disk!.dir, name);

async function admin(method: string, route: string, body?: unknown) {
  const res = await fetch(`${server!.url}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

function screenshot(url: string) {
  return fetch(`${server!.url}/v1/screenshot`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
}

async function usage(): Promise<number> {
  return (await (await fetch(`${server!.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()).calls_today;
}

/** Job state through the admin API, so polling never meets the key's 10 requests per second. */
async function until(jobId: string, done: (job: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await admin('GET', `/jobs/${jobId}`);
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(body)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const ended = (job: any) => job.status === 'completed' || job.status === 'failed';

async function jobCount(): Promise<number> {
  const { body } = await admin('GET', '/jobs?limit=100');
  return body.jobs.length;
}

/** Files a write cut short or a failed job could have left behind. */
async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  for (const sub of ['', 'files', 'sources']) {
    for (const name of await fs.readdir(path.join(disk!.dir, sub))) {
      if (/\.tmp$|~$|\.corrupt-/.test(name)) found.push(path.join(sub, name));
    }
  }
  return found;
}

describe('a full disk under the running server', () => {
  let slowJob = '';
  let files = 0;

  it('fails the running job saying the disk is full, and stays up', async (ctx) => {
    if (!disk) return ctx.skip();
    await start();
    const account = await admin('POST', '/accounts', { email: 'full@example.test', email_verified: true });
    key = (await admin('POST', `/accounts/${account.body.id}/keys`, { name: 'disk' })).body.key;
    const warm = await (await screenshot(`${fixtures.url}/small.html`)).json();
    expect((await until(warm.job_id, ended)).status).toBe('completed');
    files = (await fs.readdir(path.join(disk.dir, 'files'))).length;

    // The page's image arrives after 3 s: the disk fills while the job runs, and every one of
    // its later writes (progress, image, end) meets a full disk.
    slowJob = (await (await screenshot(`${fixtures.url}/embed-image.html?src=${encodeURIComponent('/slow?ms=3000')}`)).json()).job_id;
    await until(slowJob, (job) => job.status === 'processing');
    await disk.fill(DB_FILES.map(dbFile));
    expect(await disk.available()).toBe(0);

    const failed = await until(slowJob, ended);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/disk is full/);
    expect(server!.child.exitCode).toBeNull();
    expect((await fetch(`${server!.url}/healthz`)).status).toBe(200);
  });

  it('answers a new request 507 saying the disk is full, stores nothing and counts nothing', async (ctx) => {
    if (!disk) return ctx.skip();
    const res = await screenshot(`${fixtures.url}/small.html`);
    expect(res.status).toBe(507);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe('Insufficient storage');
    expect(body.message).toMatch(/disk is full/);
    expect(await usage()).toBe(2);
    expect(await jobCount()).toBe(2);
    expect(await leftovers()).toEqual([]);
    expect((await fs.readdir(path.join(disk.dir, 'files'))).length).toBe(files);
    expect(server!.child.exitCode).toBeNull();
  });

  it('does not count a request whose jobs could not be stored', async (ctx) => {
    if (!disk) return ctx.skip();
    // Room for the call to be counted (and given back) in usage.db, none for the job.
    await disk.free();
    await disk.fill([dbFile('jobs.db'), { file: dbFile('usage.db'), leave: 1024 }]);
    const res = await screenshot(`${fixtures.url}/small.html`);
    expect(res.status).toBe(507);
    expect((await res.json()).message).toMatch(/disk is full/);
    expect(await usage()).toBe(2);
    expect(await jobCount()).toBe(2);
  });

  it('starts again while the disk is still full, with what the clients were told', async (ctx) => {
    if (!disk) return ctx.skip();
    expect(await stop()).toBe(0);
    // Stopping freed the pages of the lock and server.json files: take them too.
    await disk.fill(DB_FILES.map(dbFile));
    expect(await disk.available()).toBe(0);
    await start();
    expect(await usage()).toBe(2);
    expect(await jobCount()).toBe(2);
    const job = await until(slowJob, ended);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/disk is full/);
    expect((await screenshot(`${fixtures.url}/small.html`)).status).toBe(507);
    expect(await leftovers()).toEqual([]);
  });

  it('takes requests again as soon as space comes back, without a restart', async (ctx) => {
    if (!disk) return ctx.skip();
    await disk.free();
    const res = await screenshot(`${fixtures.url}/small.html`);
    expect(res.status).toBe(201);
    const { job_id } = await res.json();
    expect((await until(job_id, ended)).status).toBe('completed');
    expect(await usage()).toBe(3);

    // What survives a restart is what the clients saw.
    expect(await stop()).toBe(0);
    await start();
    expect(await usage()).toBe(3);
    expect(await jobCount()).toBe(3);
    expect((await until(slowJob, ended)).error).toMatch(/disk is full/);
    expect((await until(job_id, ended)).status).toBe('completed');
    expect(await leftovers()).toEqual([]);
    expect(await stop()).toBe(0);
    expect(output.join('\n')).not.toMatch(/unhandled|uncaught/i);
  });
});
