import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HUGE, startHugeMessagePages } from '../fixtures/huge-message-pages.js';
import { type ServeProcess, serveWithKey } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

// The service in a process of its own, as it runs in production: a page that makes a DevTools
// message longer than V8's longest string used to end that process (and, re-queued at every
// start, every start after it). Each capture below must end, and the server go on.

let pages: Awaited<ReturnType<typeof startHugeMessagePages>>;
let origin: string;
let dir: string;
let proc: ServeProcess;
let key: string;

beforeAll(async () => {
  pages = await startHugeMessagePages();
  origin = pages.origin;
  dir = await tempDir('sa-hostile-');
  const served = await serveWithKey(['--data', dir, '--egress-allow', '127.0.0.1/32', '--concurrency', '1'], 'hostile@example.test');
  proc = served;
  key = served.key;
}, 60_000);

afterAll(async () => {
  if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  await pages?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function capture(body: Record<string, unknown>): Promise<{ status: string; has_page_source?: boolean; error?: string }> {
  const res = await fetch(`${proc.url}/v1/screenshot`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  const { job_id: id } = (await res.json()) as { job_id: string };
  const deadline = Date.now() + 120_000;
  for (;;) {
    expect(proc.child.exitCode, `the server exited: ${proc.stderr().slice(-2000)}`).toBeNull();
    const job = (await (await fetch(`${proc.url}/v1/screenshot/${id}`, { headers: { 'x-api-key': key } })).json()) as { status: string };
    if (job.status === 'completed' || job.status === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a server process capturing pages that make huge DevTools messages', () => {
  it('captures a page whose source is 600 MiB once escaped, without its source', async () => {
    const job = await capture({ url: `${origin}/comment.html` });
    expect(job.status).toBe('completed');
    expect(job.has_page_source).toBe(false);
  }, 180_000);

  it('captures such a page given as html', async () => {
    const html = `<!doctype html><body><h1>inline</h1><script>document.body.appendChild(document.createComment(${HUGE}))</script>`;
    const job = await capture({ html });
    expect(job.status).toBe('completed');
    expect(job.has_page_source).toBe(false);
  }, 180_000);

  it('captures a page that writes 100 MiB to its console', async () => {
    const job = await capture({ url: `${origin}/console.html` });
    expect(job.status).toBe('completed');
  }, 180_000);

  it('is alive afterwards and completes the next job', async () => {
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    const job = await capture({ url: `${origin}/fine.html` });
    expect(job.status).toBe('completed');
    expect(job, JSON.stringify(job)).toMatchObject({ has_page_source: true });
  }, 180_000);
});
