import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import type { Scenario } from './scenarios.js';

/** Accounts the captures rotate through, so no account passes its 10 requests per second. */
const ACCOUNTS = 30;
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * `screenshot-appliance serve` from the build on 127.0.0.1 and a free port, on `dataDir`: resolves
 * with the process and its address once it says it is listening (what comes before, such as
 * log lines, is passed over), or rejects with its last output when it exits or `timeoutMs` passes.
 */
export async function spawnServe(
  dataDir: string,
  options: { chromiumPath: string; args?: string[]; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ child: ChildProcess; url: string }> {
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../server/cli.js');
  const args = [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dataDir, '--egress-allow', '127.0.0.1/32', '--chromium', options.chromiumPath];
  const child: ChildProcess = spawn(process.execPath, [...args, ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-10_000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start: ${stderr}`)), options.timeoutMs ?? 60_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${stderr}`)));
  });
  return { child, url };
}

/** A running service (the headless CLI in its own process) and a client that captures through it. */
export interface ServiceUnderTest {
  pid: number;
  url: string;
  /** POST → completed (learned from the webhook) → image fetched; resolves with the image. */
  capture(pageUrl: string, s: Scenario): Promise<Buffer>;
  setConcurrency(n: number): Promise<void>;
  /** Server-side time of every ended job (start of capture to stored), newest first. */
  jobDurations(): Promise<Array<{ url: string; durationMs: number }>>;
  /** Calls the service's admin API with its token; resolves with the JSON answer. */
  admin(method: string, route: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

interface Waiter {
  resolve: (data: { screenshot_url: string }) => void;
  reject: (err: Error) => void;
}

/** Starts `screenshot-appliance serve` from the build on 127.0.0.1 with a fresh data directory. */
export async function startService(options: { chromiumPath: string; concurrency?: number }): Promise<ServiceUnderTest> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-bench-'));
  const { child, url } = await spawnServe(dataDir, {
    chromiumPath: options.chromiumPath,
    args: options.concurrency ? ['--concurrency', String(options.concurrency)] : [],
  });

  const token = (await fs.readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();
  const admin = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url}/admin/api${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`admin ${method} ${route}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  // Completion arrives as the job's webhook: no polling interval in the measured latency.
  const waiting = new Map<string, Waiter>();
  const early = new Map<string, { screenshot_url: string } | Error>();
  const hooks = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      res.writeHead(204).end();
      const event = JSON.parse(body) as { type: string; data: { job_id: string; screenshot_url: string; error?: string } };
      const outcome = event.type === 'screenshot.completed' ? event.data : new Error(`job failed: ${event.data.error}`);
      const waiter = waiting.get(event.data.job_id);
      if (!waiter) return void early.set(event.data.job_id, outcome);
      waiting.delete(event.data.job_id);
      if (outcome instanceof Error) waiter.reject(outcome);
      else waiter.resolve(outcome);
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  const callbackUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;

  const keys: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await admin('POST', '/accounts', { email: `bench${i}@example.test`, email_verified: true, daily_limit: 100_000, monthly_limit: 1_000_000 });
    keys.push((await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key);
  }
  let turn = 0;

  const completion = (jobId: string) =>
    new Promise<{ screenshot_url: string }>((resolve, reject) => {
      const known = early.get(jobId);
      if (known) {
        early.delete(jobId);
        return known instanceof Error ? reject(known) : resolve(known);
      }
      const timer = setTimeout(() => {
        waiting.delete(jobId);
        reject(new Error(`job ${jobId} did not end within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      waiting.set(jobId, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });

  return {
    admin,
    pid: child.pid!,
    url,
    async capture(pageUrl, s) {
      const res = await fetch(`${url}/v1/screenshot`, {
        method: 'POST',
        headers: { 'x-api-key': keys[turn++ % keys.length], 'content-type': 'application/json' },
        body: JSON.stringify({ url: pageUrl, devices: [s.preset.device], full_page: s.fullPage, callback_url: callbackUrl }),
        signal: AbortSignal.timeout(30_000),
      });
      if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${await res.text()}`);
      const { job_id } = (await res.json()) as { job_id: string };
      const { screenshot_url } = await completion(job_id);
      const image = await fetch(screenshot_url, { signal: AbortSignal.timeout(30_000) });
      if (!image.ok) throw new Error(`image answered ${image.status}`);
      return Buffer.from(await image.arrayBuffer());
    },
    async setConcurrency(n) {
      await admin('PUT', '/settings', { concurrency: n });
    },
    async jobDurations() {
      const out: Array<{ url: string; durationMs: number }> = [];
      let before: string | null = null;
      do {
        const page: { jobs: Array<{ url: string; duration_ms: number | null }>; next_before: string | null } = await admin(
          'GET',
          `/jobs?limit=200${before ? `&before=${before}` : ''}`,
        );
        for (const job of page.jobs) if (job.duration_ms !== null) out.push({ url: job.url, durationMs: job.duration_ms });
        before = page.next_before;
      } while (before);
      return out;
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
      hooks.closeAllConnections();
      await new Promise((resolve) => hooks.close(resolve));
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
