import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { CLI, runCli, serve, type ServeProcess } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

let fixtures: FixtureServer;
let dir: string;
let proc: ServeProcess;
let stdout = '';
let key: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  dir = await tempDir();
  proc = await serveCollecting(['--data', dir, '--egress-allow', '127.0.0.1/32', '--browsers', '1']);
  expect((await runCli(['account', 'create', '--email', 'cli@example.test', '--data', dir])).code).toBe(0);
  const created = await runCli(['key', 'create', '--account', 'cli@example.test', '--name', 'cli', '--data', dir]);
  key = JSON.parse(created.stdout).key;
});

afterAll(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  await fixtures?.close();
});

/** `serve` off a terminal, keeping all of its stdout (the helper's reader takes the lines after the first). */
async function serveCollecting(args: string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.on('data', (d) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 600 && !/API base URL/.test(stdout); i++) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
  if (!url) throw new Error(`no address in ${stdout}: ${err}`);
  return { child, url, firstLine: stdout.split('\n')[0], stderr: () => err, exited };
}

/** Runs the CLI with extra environment variables; `onStderr` sees its stderr so far each time more comes. */
function runWith(
  args: string[],
  env: Record<string, string>,
  onStderr: (err: string) => void = () => undefined,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => onStderr((err += d)));
    child.on('exit', (code) => resolve({ code, stdout: out, stderr: err }));
  });
}

describe('serve without a terminal', () => {
  it('never prints the admin token, and names its file instead', async () => {
    const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
    expect(stdout).toContain(`Control panel: ${proc.url}/admin/ (open it with the admin token in ${path.join(dir, 'admin-token')})`);
    expect(stdout).not.toContain(token);
    expect(proc.stderr()).not.toContain(token);
  });

  it('shows the token in the panel address on a terminal', async () => {
    const other = await tempDir();
    // `script` gives the command a pseudo-terminal as its stdout.
    const child = spawn('script', ['-qfec', `${process.execPath} ${CLI} serve --host 127.0.0.1 --port 0 --browsers 1 --data ${other}`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      for (let i = 0; i < 300 && !/API base URL/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      const token = (await fs.readFile(path.join(other, 'admin-token'), 'utf8')).trim();
      expect(out).toContain(`/admin/#token=${token}`);
    } finally {
      child.stdin.end('\x03');
      child.kill('SIGTERM');
      await exited;
      // The server under `script` gets its own SIGTERM through the terminal's hang-up.
      for (let i = 0; i < 100; i++) {
        try {
          await fs.access(path.join(other, 'server.json'));
          await new Promise((r) => setTimeout(r, 100));
        } catch {
          break;
        }
      }
    }
  });
});

describe('serve --metrics-token', () => {
  const token = 'scrape-only-0123456789abcdef';

  /** Starts a server of its own on a fresh data directory; stops it when `check` is done. */
  async function withServe(args: string[], env: Record<string, string>, check: (url: string, adminToken: string) => Promise<void>) {
    const data = await tempDir();
    const other = await serve(['--browsers', '1', '--data', data, ...args], 30_000, env);
    try {
      await check(other.url, (await fs.readFile(path.join(data, 'admin-token'), 'utf8')).trim());
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
    }
  }

  const scrape = async (url: string, bearer: string) => (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${bearer}` } })).status;

  it('opens /metrics with the token given on the command line, and no longer with the admin token', async () => {
    await withServe(['--metrics-token', token], {}, async (url, adminToken) => {
      expect(await scrape(url, token)).toBe(200);
      expect(await scrape(url, adminToken)).toBe(401);
    });
  });

  it('takes the token from SCREENSHOT_METRICS_TOKEN', async () => {
    await withServe([], { SCREENSHOT_METRICS_TOKEN: token }, async (url, adminToken) => {
      expect(await scrape(url, token)).toBe(200);
      expect(await scrape(url, adminToken)).toBe(401);
    });
  });

  it('refuses to start with a token shorter than 16 characters', async () => {
    for (const [args, env] of [
      [['--metrics-token', 'x'.repeat(15)], {}],
      [[], { SCREENSHOT_METRICS_TOKEN: 'short' }],
    ] as const) {
      const res = await runWith(['serve', '--host', '127.0.0.1', '--port', '0', '--data', await tempDir(), ...args], env);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('the metrics token must be at least 16 characters long');
    }
  });
});

describe('the commands', () => {
  it('answers --help for every command, and 2 for an unknown one', async () => {
    for (const args of [['--help'], ['serve', '--help'], ['account', 'create', '--help'], ['key', 'revoke', '--help'], ['backup', '--help'], ['capture', '--help']]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toMatch(/^Usage: screenshot-appliance/);
    }
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
    const missing = await runCli(['account', 'create', '--data', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--email/);
  });

  it('lists accounts and keys and revokes a key through the running server', async () => {
    const accounts = JSON.parse((await runCli(['account', 'list', '--data', dir])).stdout);
    expect(accounts.map((a: { email: string }) => a.email)).toContain('cli@example.test');
    const extra = JSON.parse((await runCli(['key', 'create', '--account', 'cli@example.test', '--ip', '10.0.0.0/8', '--ip', '::1', '--data', dir])).stdout);
    expect(extra.ip_whitelist).toEqual(['10.0.0.0/8', '::1']);
    expect(extra.network_scope).toBe('lan');
    const scoped = JSON.parse((await runCli(['key', 'create', '--account', 'cli@example.test', '--network-scope', '10.20.1.0/16, Wiki.Corp.Example', '--data', dir])).stdout);
    expect(scoped.network_scope).toEqual(['10.20.0.0/16', 'wiki.corp.example']);
    const keys = JSON.parse((await runCli(['key', 'list', '--account', 'cli@example.test', '--data', dir])).stdout);
    expect(keys.map((k: { id: string }) => k.id)).toContain(extra.id);
    const revoked = await runCli(['key', 'revoke', extra.id, '--data', dir]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked).toBe(true);
    const nowhere = await runCli(['account', 'list', '--data', await tempDir()]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/No running server found/);
  });
});

describe('capture', () => {
  it('saves one image per device under a readable name, with plain progress lines off a terminal', async () => {
    const out = await tempDir();
    const res = await runWith(
      ['capture', `${fixtures.url}/small.html`, '--devices', 'desktop,mobile', '--full-page', '--format', 'webp', '--out', out, '--server', proc.url],
      { SCREENSHOT_API_KEY: key },
    );
    expect(res.code, res.stderr).toBe(0);
    const files = res.stdout.trim().split('\n');
    expect(files).toHaveLength(2);
    expect(path.basename(files[0])).toMatch(/^127\.0\.0\.1-desktop-\d{8}-\d{6}\.webp$/);
    expect(path.basename(files[1])).toMatch(/^127\.0\.0\.1-mobile-\d{8}-\d{6}\.webp$/);
    for (const file of files) {
      const data = await fs.readFile(file);
      expect(data.subarray(0, 4).toString()).toBe('RIFF');
      expect(data.subarray(8, 12).toString()).toBe('WEBP');
    }
    expect(res.stderr).toMatch(/^desktop: saved 100% 127\.0\.0\.1-desktop-/m);
    expect(res.stderr).toMatch(/^mobile: saved 100% /m);
    expect(res.stderr).not.toContain('\x1b');
  });

  it('prints the saved files in the order the devices were asked for, not the order their captures end in', async () => {
    const out = await tempDir();
    // The desktop page is held until the command has saved the mobile image (captured beside it),
    // so the first device asked for ends last.
    const res = await runWith(
      ['capture', `${fixtures.url}/held-desktop.html?name=cli-order`, '--devices', 'desktop,mobile', '--out', out, '--server', proc.url, '--key', key],
      {},
      (err) => {
        if (/^mobile: saved 100%/m.test(err)) fixtures.release('cli-order');
      },
    );
    expect(res.code, res.stderr).toBe(0);
    const savedAt = (device: string) => res.stderr.search(new RegExp(`^${device}: saved 100%`, 'm'));
    expect(savedAt('mobile')).toBeGreaterThanOrEqual(0);
    expect(savedAt('mobile'), 'the mobile capture ended first').toBeLessThan(savedAt('desktop'));
    const files = res.stdout.trim().split('\n').map((f) => path.basename(f));
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^127\.0\.0\.1-desktop-/);
    expect(files[1]).toMatch(/^127\.0\.0\.1-mobile-/);
  });

  it('draws a bar per device on a terminal', async () => {
    const out = await tempDir();
    const child = spawn(
      'script',
      ['-qfec', `${process.execPath} ${CLI} capture ${fixtures.url}/small.html --devices all --out ${out} --server ${proc.url} --key ${key}`, '/dev/null'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(text).toMatch(/desktop +\[#{24}\] 100% saved/);
    expect(text).toContain('\x1b[3A');
    expect((await fs.readdir(out)).sort()).toHaveLength(3);
  });

  it('reports a failed device with its error and exits 1', async () => {
    const res = await runCli(['capture', 'http://127.0.0.2:9/', '--out', await tempDir(), '--server', proc.url, '--key', key]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^desktop: failed 0% blocked by egress policy: 127\.0\.0\.2 is a loopback address/m);
    expect(res.stdout).toBe('');
  });

  it('refuses to run without a key, and says which server does not answer', async () => {
    const noKey = await runWith(['capture', 'https://example.com', '--server', proc.url], { SCREENSHOT_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/API key/);
    const down = await runCli(['capture', 'https://example.com', '--server', 'http://127.0.0.1:9', '--key', key]);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/http:\/\/127\.0\.0\.1:9 does not answer/);
  });
});

describe('stopping', () => {
  it('says it stopped cleanly and how many jobs it left for the next start', async () => {
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${proc.url}/v1/screenshot`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${fixtures.url}/small.html`, devices: ['all'] }),
      });
      jobs.push(...(await res.json()).jobs.map((j: { job_id: string }) => j.job_id));
    }
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const line = /stopped cleanly; (\d+) jobs re-queued/.exec(proc.stderr());
    expect(line).not.toBeNull();
    const stores = await openNedbStores(dir, silentLogger);
    const left = await stores.jobs.count({ status: ['pending', 'processing'] });
    expect(Number(line![1])).toBe(left);
    expect(left).toBeGreaterThan(0);
    const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
    expect(stdout + proc.stderr()).not.toContain(token);
  });
});
