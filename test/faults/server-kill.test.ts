import fs from 'node:fs/promises';

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_RUNS_AFTER_A_STOP } from '../../server/jobs/job-run.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { adminCall, serve, type ServeProcess, serveWithKey } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { type Receiver,startReceiver } from '../webhooks/receiver.js';

let fixtures: FixtureServer;
let receiver: Receiver;
let dir: string;
const running: ServeProcess[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // Every delivery is refused until the server has been killed, so some are still owed then.
  receiver = await startReceiver([], { fallback: 503 });
  dir = await tempDir('sa-fault-kill-');
});

afterAll(async () => {
  for (const proc of running) {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  }
  await receiver?.close();
  await fixtures?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The jobs' statuses, read through the admin API (which has no per-second limit). */
async function statuses(url: string, token: string, ids: string[]): Promise<string[]> {
  const res = await fetch(`${url}/admin/api/jobs?limit=200`, { headers: { authorization: `Bearer ${token}` } });
  const { jobs } = (await res.json()) as { jobs: Array<{ job_id: string; status: string }> };
  return ids.map((id) => jobs.find((j) => j.job_id === id)?.status ?? 'missing');
}

const delivered = () =>
  receiver.received.filter((_, i) => i >= refusedBeforeKill).map((w) => ({ id: w.headers['webhook-id'] as string, body: JSON.parse(w.body) }));
let refusedBeforeKill = 0;

describe('a server killed with SIGKILL while jobs are queued and running', () => {
  it('completes every job after a restart and loses no webhook', async () => {
    const args = ['--data', dir, '--egress-allow', '127.0.0.1/32', '--concurrency', '1'];
    const first = await serveWithKey(args, 'fault-kill@example.test', 'fault');
    running.push(first);
    const { token, key } = first;
    const { secret } = await first.admin(`/accounts/${first.accountId}/webhook-secret`);

    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const body = i % 2 ? { url: `${fixtures.url}/tall.html?h=8000&n=${i}`, full_page: true } : { url: `${fixtures.url}/small.html?n=${i}` };
      const res = await fetch(`${first.url}/v1/screenshot`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, callback_url: `${receiver.url}/hook` }),
      });
      expect(res.status).toBe(201);
      ids.push((await res.json()).job_id);
      await new Promise((r) => setTimeout(r, 110)); // under 10 requests a second
    }
    // Kill once a delivery has been refused (so one is owed), a capture is under way and jobs wait.
    await until(
      'a refused delivery, a running capture and a waiting job',
      async () => {
        if (receiver.received.length === 0) return false;
        const now = await statuses(first.url, token, ids);
        return now.includes('processing') && now.includes('pending');
      },
      60_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    refusedBeforeKill = receiver.received.length;
    receiver.fallback = 200;

    const second = await serve(args);
    running.push(second);
    await until('every job to complete', async () => (await statuses(second.url, token, ids)).every((s) => s === 'completed'), 120_000);
    // The retry schedule's first step is about 5 s; a restart must resume it, not forget it.
    await until('a webhook for every job', async () => ids.every((id) => delivered().some((d) => d.body.data.job_id === id)), 45_000);

    const verifier = new Webhook(secret);
    for (const hook of receiver.received.slice(refusedBeforeKill)) {
      expect(() => verifier.verify(hook.body, hook.headers as Record<string, string>)).not.toThrow();
    }
    for (const id of ids) {
      const forJob = delivered().filter((d) => d.body.data.job_id === id);
      expect(forJob[0].body.type).toBe('screenshot.completed');
      // At least once; a repeat carries the same webhook-id so a receiver can drop it.
      expect(new Set(forJob.map((d) => d.id)).size).toBe(1);
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 240_000);

  it('sends the webhook of a job whose end was stored just before the process stopped, once', async () => {
    // What a kill between storing a job's end and storing its delivery leaves: the end, marked due, and no delivery.
    const stores = await openNedbStores(dir, silentLogger);
    const [ended] = await stores.jobs.list({ limit: 1, status: 'completed' });
    const orphan = { ...ended, _id: `${ended._id.slice(0, -4)}kill`, webhook_due: true, callback_url: `${receiver.url}/orphan` };
    await stores.jobs.insert([orphan]);
    expect(await stores.deliveries.list({ job_id: orphan._id, limit: 10 })).toEqual([]);
    await stores.close();

    const before = receiver.received.length;
    const third = await serve(['--data', dir, '--egress-allow', '127.0.0.1/32']);
    running.push(third);
    const forOrphan = () => receiver.received.slice(before).filter((w) => JSON.parse(w.body).data.job_id === orphan._id);
    await until('the webhook of the job ended before the stop', async () => forOrphan().length > 0, 30_000);
    expect(JSON.parse(forOrphan()[0].body).type).toBe('screenshot.completed');
    // Marked sent: the next start does not queue it again.
    third.child.kill('SIGTERM');
    expect(await third.exited, third.stderr().slice(-2000)).toBe(0);
    const fourth = await serve(['--data', dir, '--egress-allow', '127.0.0.1/32']);
    running.push(fourth);
    await new Promise((r) => setTimeout(r, 1500));
    expect(forOrphan()).toHaveLength(1);
    fourth.child.kill('SIGTERM');
    expect(await fourth.exited, fourth.stderr().slice(-2000)).toBe(0);
  }, 120_000);
});

describe('a job under way each time the server is killed', () => {
  it(`runs it again ${MAX_RUNS_AFTER_A_STOP} times, then fails it saying it stopped the service, and the next job completes`, async () => {
    // What a page that kills the process does to a service manager restarting it: every start takes the job, and dies of it.
    const killerDir = await tempDir('sa-fault-killer-');
    try {
      const args = ['--data', killerDir, '--egress-allow', '127.0.0.1/32', '--concurrency', '1'];
      const served = await serveWithKey(args, 'fault-killer@example.test', 'killer');
      let proc: ServeProcess = served;
      running.push(proc);
      const { token, key } = served;
      const admin = (url: string, route: string, body?: unknown) => adminCall(url, token, route, body);
      const post = async (url: string, body: unknown) => {
        const res = await fetch(`${url}/v1/screenshot`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { job_id: string }).job_id;
      };
      // Its page never ends loading: the job is under way whenever the process is killed.
      const killer = await post(proc.url, { url: `${fixtures.url}/embed-image.html?src=/held%3Fname%3Dkiller` });
      const job = async (url: string) => (await admin(url, `/jobs/${killer}`)) as { status: string; error?: string };

      for (let run = 1; run <= MAX_RUNS_AFTER_A_STOP + 1; run++) {
        await until(`run ${run} of the job`, async () => (await job(proc.url)).status === 'processing', 60_000);
        proc.child.kill('SIGKILL');
        await proc.exited;
        proc = await serve(args);
        running.push(proc);
      }
      const ended = await until('the job to fail', async () => {
        const now = await job(proc.url);
        return now.status === 'failed' && now;
      }, 30_000);
      expect(ended.error).toBe(`The service stopped ${MAX_RUNS_AFTER_A_STOP + 1} times while capturing this page; it is not tried again`);

      const next = await post(proc.url, { url: `${fixtures.url}/small.html?after=killer` });
      await until('the next job to complete', async () => (await admin(proc.url, `/jobs/${next}`)).status === 'completed', 60_000);
      proc.child.kill('SIGTERM');
      expect(await proc.exited, proc.stderr().slice(-2000)).toBe(0);
    } finally {
      fixtures.release('killer');
      await fs.rm(killerDir, { recursive: true, force: true });
    }
  }, 240_000);
});
