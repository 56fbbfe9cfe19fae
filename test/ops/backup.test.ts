import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { backupDataDir } from '../../server/cli/backup.js';
import { readTarGz } from '../../server/cli/tar.js';
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

  it('has the image and page source of every job it shows completed, also of jobs that completed during the backups', async () => {
    const source = await startTestServer({ browsers: 1, concurrency: 2 });
    try {
      const { key } = await source.account();
      // Bulk in files/ that does not compress makes each backup last a while, so captures end
      // during it: after its datastores were read, and while the images were.
      const padding = crypto.randomBytes(256 * 1024);
      for (let i = 0; i < 120; i++) await fs.writeFile(path.join(source.dataDir, 'files', `padding-${i}.bin`), padding);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await (await source.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['all'] })).json();
        ids.push(...created.jobs.map((j: { job_id: string }) => j.job_id));
      }
      let ended = false;
      const all = Promise.all(ids.map((id) => waitForJob(source, key, id, 120_000))).finally(() => (ended = true));
      const archives: string[] = [];
      const dir = await tempDir();
      while (!ended || archives.length === 0) {
        const archive = path.join(dir, `data-${archives.length}.tar.gz`);
        await backupDataDir(source.dataDir, archive);
        archives.push(archive);
      }
      expect((await all).map((j) => j.status)).toEqual(ids.map(() => 'completed'));

      const completedCounts = new Set<number>();
      for (const archive of archives) {
        const names = new Set<string>();
        let jobsDb = '';
        for await (const entry of readTarGz(archive)) {
          names.add(entry.name);
          if (entry.name === 'jobs.db') jobsDb = entry.data.toString('utf8');
        }
        // NeDB's file: a record's last line is its state.
        const jobs = new Map<string, { _id: string; status: string; image_file: string | null; has_page_source: boolean }>();
        for (const line of jobsDb.split('\n').filter(Boolean)) {
          const record = JSON.parse(line);
          if (ids.includes(record._id)) jobs.set(record._id, record);
        }
        const completed = [...jobs.values()].filter((job) => job.status === 'completed');
        completedCounts.add(completed.length);
        for (const job of completed) {
          expect(names.has(`files/${job.image_file}`), `${path.basename(archive)}: image of ${job._id}`).toBe(true);
          expect(job.has_page_source).toBe(true);
          expect(names.has(`sources/${job._id}.html`), `${path.basename(archive)}: source of ${job._id}`).toBe(true);
        }
      }
      // The backups saw the jobs at different stages: captures ended while they were written.
      expect(archives.length).toBeGreaterThan(1);
      expect(completedCounts.size).toBeGreaterThan(1);
    } finally {
      await source.close();
    }
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
