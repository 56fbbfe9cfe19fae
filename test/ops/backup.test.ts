import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { runCli } from '../helpers/cli-process.js';
import { startTestServer, tempDir, type TestServer, waitForJob } from '../helpers/test-server.js';

let fixtures: FixtureServer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await fixtures?.close();
});

describe('backup and restore', () => {
  let server: TestServer | undefined;
  let restored: TestServer | undefined;
  afterAll(async () => {
    await server?.close();
    await restored?.close();
  });

  it('round-trips a running server: its jobs, images and page sources read back from a server on the restored directory', async () => {
    server = await startTestServer({ browsers: 1 });
    const { key, accountId } = await server.account();
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['desktop', 'mobile'] })).json();
    const jobs = await Promise.all(created.jobs.map((j: { job_id: string }) => waitForJob(server!, key, j.job_id)));
    expect(jobs.map((j) => j.status)).toEqual(['completed', 'completed']);
    const images = await Promise.all(jobs.map(async (j) => Buffer.from(await (await fetch(j.screenshot_url)).arrayBuffer())));
    // More jobs are created and run while the archive is written.
    const during = server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['all'] });

    const archive = path.join(await tempDir(), 'data.tar.gz');
    const backup = await runCli(['backup', '--out', archive, '--data', server.dataDir]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/^backed up \d+ files \(\d+ bytes\) to /);
    const late = await (await during).json();
    await Promise.all(late.jobs.map((j: { job_id: string }) => waitForJob(server!, key, j.job_id)));

    // A standard archive: tar lists what is in it.
    const listed = execFileSync('tar', ['tzf', archive], { encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(expect.arrayContaining(['jobs.db', 'accounts.db', 'keys.db', 'admin-token', 'backup.json', `sources/${jobs[0].job_id}.html`]));
    expect(listed.filter((n) => n.startsWith('files/')).length).toBeGreaterThanOrEqual(2);
    expect(listed).not.toContain('.lock');
    expect(listed).not.toContain('server.json');

    await server.close();
    server = undefined;

    const target = path.join(await tempDir(), 'restored');
    const restore = await runCli(['restore', '--from', archive, '--data', target]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`restored `);
    expect((await fs.stat(target)).mode & 0o777).toBe(0o700);

    restored = await startTestServer({ browsers: 1, dataDir: target });
    for (const [k, job] of jobs.entries()) {
      const res = await restored.v1('GET', `/screenshot/${job.job_id}?include_source=1`, key);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'completed', has_page_source: true });
      expect(body.page_source).toContain('<');
      const image = Buffer.from(await (await fetch(body.screenshot_url.replace(/^http:\/\/[^/]+/, restored.url))).arrayBuffer());
      expect(image.equals(images[k])).toBe(true);
    }
    const accounts = await restored.admin('GET', '/accounts');
    expect(accounts.body.accounts.map((a: { id: string }) => a.id)).toContain(accountId);
  });

  it('refuses to restore into a directory that is not empty, and leaves it as it was', async () => {
    const source = await startTestServer({ browsers: 1 });
    const archive = path.join(await tempDir(), 'data.tar.gz');
    try {
      expect((await runCli(['backup', '--out', archive, '--data', source.dataDir])).code).toBe(0);
    } finally {
      await source.close();
    }
    const target = await tempDir();
    await fs.writeFile(path.join(target, 'keep.txt'), 'mine');
    const res = await runCli(['restore', '--from', archive, '--data', target]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/is not empty/);
    expect(await fs.readdir(target)).toEqual(['keep.txt']);
  });

  it('refuses a damaged archive and leaves nothing behind', async () => {
    const source = await startTestServer({ browsers: 1 });
    const archive = path.join(await tempDir(), 'data.tar.gz');
    try {
      expect((await runCli(['backup', '--out', archive, '--data', source.dataDir])).code).toBe(0);
    } finally {
      await source.close();
    }
    // An archive whose datastore differs from its manifest (rebuilt with system tar).
    const work = await tempDir();
    execFileSync('tar', ['xzf', archive, '-C', work]);
    await fs.appendFile(path.join(work, 'accounts.db'), '{"_id":"intruder"}\n');
    const tampered = path.join(await tempDir(), 'tampered.tar.gz');
    execFileSync('tar', ['czf', tampered, '--format=ustar', '-C', work, ...(await fs.readdir(work))]);
    const target = path.join(await tempDir(), 'restored');
    const res = await runCli(['restore', '--from', tampered, '--data', target]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/accounts\.db does not match its checksum/);
    expect(await fs.readdir(target)).toEqual([]);
  });

  it('keeps the whole lines of a datastore whose last line is still being written', async () => {
    const source = await startTestServer({ browsers: 1 });
    const archive = path.join(await tempDir(), 'data.tar.gz');
    try {
      await source.account();
      await fs.appendFile(path.join(source.dataDir, 'usage.db'), '{"_id":"half-writ');
      expect((await runCli(['backup', '--out', archive, '--data', source.dataDir])).code).toBe(0);
    } finally {
      await source.close().catch(() => undefined);
    }
    const work = await tempDir();
    execFileSync('tar', ['xzf', archive, '-C', work]);
    const usage = await fs.readFile(path.join(work, 'usage.db'), 'utf8');
    expect(usage.endsWith('\n')).toBe(true);
    expect(usage).not.toContain('half-writ');
    for (const line of usage.trim().split('\n').filter(Boolean)) JSON.parse(line);
  });
});
