import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { browserProcesses } from '../../bench/process-tree.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { adminToken, runCli, serve, serveWithKey } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

let fixtures: FixtureServer;
const dirs: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await fixtures.close();
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
});

async function dataDir() {
  const dir = await tempDir('sa-restart-');
  dirs.push(dir);
  return dir;
}

/** Job states through the admin API, so polling never meets the key's 10 requests per second. */
async function jobStatuses(url: string, dir: string, ids: string[]) {
  const token = await adminToken(dir);
  return Promise.all(
    ids.map(async (id) => (await (await fetch(`${url}/admin/api/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()).status),
  );
}

async function until(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the headless server process', () => {
  it('prints where it listens first, and the control panel address next', async () => {
    const dir = await dataDir();
    const proc = await serve(['--data', dir]);
    try {
      expect(proc.firstLine).toMatch(/^Screenshot Appliance listening on http:\/\/127\.0\.0\.1:\d+$/);
      const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
      expect((await fs.stat(path.join(dir, 'admin-token'))).mode & 0o777).toBe(0o600);
      const health = await fetch(`${proc.url}/healthz`);
      expect(health.status).toBe(200);
      const accounts = await fetch(`${proc.url}/admin/api/accounts`, { headers: { authorization: `Bearer ${token}` } });
      expect(accounts.status).toBe(200);
    } finally {
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    }
  });

  it('stops cleanly on a SIGTERM sent the moment it prints its first line', async () => {
    // A service manager or a script may stop it as soon as it says it listens.
    for (let i = 0; i < 3; i++) {
      const proc = await serve(['--data', await dataDir()]);
      proc.child.kill('SIGTERM');
      expect(await proc.exited, proc.stderr().slice(-2000)).toBe(0);
    }
  });

  it('shares captures among two browsers by default, and among as many as --browsers says', async () => {
    /** Chromium main processes the server started. */
    const browsersOf = (pid: number) => browserProcesses(pid).length;
    for (const [args, expected] of [[[], 2], [['--browsers', '1'], 1], [['--browsers', '3'], 3]] as const) {
      const proc = await serve(['--data', await dataDir(), ...args]);
      try {
        expect(browsersOf(proc.child.pid!)).toBe(expected);
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
    }
    const refused = await runCli(['serve', '--host', '127.0.0.1', '--port', '0', '--data', await dataDir(), '--browsers', '0']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--browsers must be a whole number from 1 to 8, got "0"/);
  });

  it('refuses a second server on the same data directory with a clear message', async () => {
    const dir = await dataDir();
    const first = await serve(['--data', dir]);
    try {
      const second = await runCli(['serve', '--host', '127.0.0.1', '--port', '0', '--data', dir]);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/already using the data directory/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it('creates accounts and keys from the command line through the running server', async () => {
    const dir = await dataDir();
    const proc = await serve(['--data', dir]);
    try {
      const account = await runCli(['account', 'create', '--email', 'ops@example.test', '--data', dir]);
      expect(account.code).toBe(0);
      expect(JSON.parse(account.stdout)).toMatchObject({ email: 'ops@example.test', email_verified: true, plan: 'super_user' });
      const key = await runCli(['key', 'create', '--account', 'ops@example.test', '--ip', '127.0.0.1', '--data', dir]);
      expect(key.code).toBe(0);
      const created = JSON.parse(key.stdout);
      expect(created.key).toMatch(/^sa_/);
      expect(created.ip_whitelist).toEqual(['127.0.0.1']);
      const usage = await fetch(`${proc.url}/v1/usage`, { headers: { 'x-api-key': created.key } });
      expect(usage.status).toBe(200);
      const bad = await runCli(['key', 'create', '--account', 'ops@example.test', '--ip', '300.1.1.1', '--data', dir]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/300\.1\.1\.1/);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  it('completes every queued job after being killed with SIGKILL and restarted', async () => {
    const dir = await dataDir();
    const args = ['--data', dir, '--egress-allow', '127.0.0.1/32', '--concurrency', '1'];
    const first = await serveWithKey(args, 'kill@example.test');
    const { key } = first;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${first.url}/v1/screenshot`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${fixtures.url}/tall.html?h=3000&n=${i}`, full_page: true }),
      });
      ids.push((await res.json()).job_id);
    }
    await until(async () => (await jobStatuses(first.url, dir, ids)).includes('processing'), 20_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const before = await fs.readFile(path.join(dir, '.lock'), 'utf8');
    expect(Number(before)).toBe(first.child.pid);

    const second = await serve(args);
    try {
      await until(async () => (await jobStatuses(second.url, dir, ids)).every((s) => s === 'completed'), 90_000);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  });
});
