import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { captureLog } from '../helpers/capture-log.js';
import { startTestServer, tempDir, type TestServer,waitForJob } from '../helpers/test-server.js';

let fixtures: FixtureServer;
const dirs: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
});

afterAll(async () => {
  await fixtures?.close();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

describe('a datastore whose last line was cut short', () => {
  it('still lets the server start, reports the damage, and keeps every whole record', async () => {
    const dir = await tempDir('sa-fault-corrupt-');
    dirs.push(dir);
    const first = await startTestServer({ dataDir: dir });
    const { key } = await first.account();
    const { job_id } = await (await first.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    expect((await waitForJob(first, key, job_id)).status).toBe('completed');
    await first.srv.close();

    // What a crash in the middle of an append leaves: a partial JSON line without its newline.
    for (const name of ['accounts.db', 'jobs.db']) {
      await fs.appendFile(path.join(dir, name), '{"_id":"cut-short","email":"half@exam');
    }

    const logs = captureLog();
    const second = await startTestServer({ dataDir: dir }, { log: logs.log });
    try {
      const warnings = logs.records.filter((r) => r.level === 'warn' && r.component === 'stores');
      expect(warnings.filter((r) => /accounts\.db|jobs\.db/.test(r.msg) && /unreadable|corrupt/i.test(r.msg))).toHaveLength(2);
      const kept = (await fs.readdir(dir)).filter((f) => f.includes('.corrupt'));
      expect(kept).toHaveLength(2);
      expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
      const job = await (await second.v1('GET', `/screenshot/${job_id}`, key)).json();
      expect(job.status).toBe('completed');
      const { job_id: next } = await (await second.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
      expect((await waitForJob(second, key, next)).status).toBe('completed');
    } finally {
      await second.srv.close();
    }
  });
});

describe('a full disk while an image is written', () => {
  let dir: string;
  let filesDir: string;
  let mounted = false;
  let server: TestServer | undefined;

  beforeAll(async () => {
    dir = await tempDir('sa-fault-disk-');
    dirs.push(dir);
    filesDir = path.join(dir, 'files');
    await fs.mkdir(filesDir);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', filesDir], { stdio: 'pipe', timeout: 10_000 });
      mounted = true;
    } catch (err) {
      console.warn(`skipping the full-disk test: cannot mount a tmpfs (${String((err as Error).message).trim()})`);
    }
  });

  afterAll(async () => {
    await server?.srv.close();
    if (mounted) execFileSync('umount', [filesDir], { stdio: 'pipe', timeout: 10_000 });
  });

  it('fails the job cleanly, leaves nothing half-written, and the next job succeeds once there is room', async (ctx) => {
    if (!mounted) ctx.skip();
    server = await startTestServer({ dataDir: dir });
    const { key } = await server.account();
    // Fill the images' file system, leaving a few kilobytes: less than any screenshot needs.
    const filler = path.join(filesDir, 'filler.bin');
    const handle = await fs.open(filler, 'w');
    try {
      const block = Buffer.alloc(64 * 1024, 1);
      for (;;) await handle.write(block);
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      await handle.close();
    }
    const stats = await fs.statfs(filesDir);
    expect(stats.bavail * stats.bsize).toBeLessThan(64 * 1024);

    const { job_id } = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/tall.html?h=2000` })).json();
    const failed = await waitForJob(server, key, job_id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/disk is full/);
    expect((await fs.readdir(filesDir)).filter((f) => f !== 'filler.bin')).toEqual([]);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect((await server.v1('GET', '/usage', key)).status).toBe(200);
    expect((await server.admin('GET', '/accounts')).status).toBe(200);

    await fs.rm(filler);
    const { job_id: next } = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/tall.html?h=2000` })).json();
    const done = await waitForJob(server, key, next);
    expect(done.status).toBe('completed');
    expect((await fetch(done.screenshot_url)).status).toBe(200);
  });
});
