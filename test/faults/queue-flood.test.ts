import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openFds, snapshotTree, type TreeSnapshot } from '../../bench/process-tree.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { serve, type ServeProcess } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const JOBS = 200;
const ACCOUNTS = 20;
const MB = 1024 * 1024;

let fixtures: FixtureServer;
let dir: string;
let proc: ServeProcess | undefined;
/** The test's own connections to the server, kept alive and closed together once the flood is over. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** A JSON request to the server over `agent`: its status and its JSON body. */
function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  dir = await tempDir('sa-fault-flood-');
});

afterAll(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  await fixtures?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('200 jobs queued at once', () => {
  it('all complete, with the memory of the server and its browsers bounded', async () => {
    proc = await serve(['--data', dir, '--egress-allow', '127.0.0.1/32']);
    const url = proc.url;
    const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
    const admin = async (route: string, body: unknown) => (await call('POST', `${url}/admin/api${route}`, { authorization: `Bearer ${token}` }, body)).body;
    // Many accounts, so the burst stays inside each account's 10 requests per second.
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await admin('/accounts', { email: `flood${i}@example.test`, email_verified: true });
      keys.push((await admin(`/accounts/${account.id}/keys`, { name: 'flood' })).key);
    }
    const pid = proc.child.pid!;
    const baseline = snapshotTree(pid);
    const samples: TreeSnapshot[] = [];
    const started = Date.now();
    const sampler = setInterval(() => samples.push(snapshotTree(pid)), 250);

    try {
      // Cheap captures (small pages, a small viewport): the point is the queue and the memory.
      const pages = ['/small.html', '/images.html?n=4'];
      const created = await Promise.all(
        Array.from({ length: JOBS }, async (_, i) => {
          const page = pages[i % pages.length];
          const res = await call('POST', `${url}/v1/screenshot`, { 'x-api-key': keys[i % ACCOUNTS] }, {
            url: `${fixtures.url}${page}${page.includes('?') ? '&' : '?'}i=${i}`,
            width: 320,
            height: 240,
          });
          expect(res.status).toBe(201);
          return { key: keys[i % ACCOUNTS], id: res.body.job_id as string };
        }),
      );
      expect(new Set(created.map((c) => c.id)).size).toBe(JOBS);

      // A queue that stops moving fails at once; a slow machine only makes the run longer.
      let lastProgress = Date.now();
      let open = created;
      while (open.length) {
        if (Date.now() - lastProgress > 60_000) throw new Error(`${open.length} job(s) still open and none ended for 60 s`);
        await new Promise((r) => setTimeout(r, 1000));
        // Check a handful per second per account, within the rate limit.
        const batch = open.slice(0, 40);
        const ended = await Promise.all(
          batch.map(async (c) => {
            const job = (await call('GET', `${url}/v1/screenshot/${c.id}`, { 'x-api-key': c.key })).body;
            return job.status === 'completed' || job.status === 'failed' ? job : null;
          }),
        );
        for (const job of ended.filter(Boolean)) expect(job.status, job.error).toBe('completed');
        const done = new Set(ended.filter(Boolean).map((j) => j.job_id));
        if (done.size) lastProgress = Date.now();
        open = open.filter((c) => !done.has(c.id));
      }
    } finally {
      clearInterval(sampler);
      // The client's side of every connection goes now, as clients that leave would; the server must then let go of its side.
      agent.destroy();
    }

    const peakServer = Math.max(...samples.map((s) => s.rss));
    const peakBrowsers = Math.max(...samples.map((s) => s.childrenPss));
    const peakProcesses = Math.max(...samples.map((s) => s.processes));
    // Descriptors once the clients' connections have closed (the agent is destroyed above): a
    // leak keeps them past any wait; closing ones are waited for, up to 80 s.
    const fdBound = baseline.fds + 30;
    const fdDeadline = Date.now() + 80_000;
    while (openFds(pid) >= fdBound && Date.now() < fdDeadline) await new Promise((r) => setTimeout(r, 250));
    const fdsAfter = openFds(pid);
    console.log(
      `200 jobs in ${((Date.now() - started) / 1000).toFixed(1)} s: server RSS ${Math.round(baseline.rss / MB)} -> peak ${Math.round(peakServer / MB)} MB; ` +
        `browsers peak ${Math.round(peakBrowsers / MB)} MB (PSS) in ${peakProcesses} processes; fds ${baseline.fds} -> ${fdsAfter} after`,
    );
    expect(peakServer - baseline.rss).toBeLessThan(300 * MB);
    expect(peakBrowsers).toBeLessThan(1536 * MB);
    expect(peakProcesses).toBeLessThan(40);
    expect(fdsAfter).toBeLessThan(fdBound);

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  }, 400_000);
});
