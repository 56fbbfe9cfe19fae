import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { backupDataDir } from '../../server/cli/backup.js';
import { readTarGz } from '../../server/cli/tar.js';
import { SecretBox } from '../../server/crypto/secret-box.js';
import { SECRET_KEY_FILE } from '../../server/store/data-dir.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { runCli } from '../helpers/cli-process.js';
import { filesUnder } from '../helpers/files-under.js';
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
      const backup = async () => {
        const archive = path.join(dir, `data-${archives.length}.tar.gz`);
        await backupDataDir(source.dataDir, archive);
        archives.push(archive);
      };
      // Backups one after another while the captures run, and one once they all ended: on a
      // loaded machine every capture may end within the first backup.
      do {
        await backup();
      } while (!ended);
      await backup();
      expect((await all).map((j) => j.status)).toEqual(ids.map(() => 'completed'));

      const completedCounts = new Set<number>();
      for (const archive of archives) {
        const names = new Set<string>();
        let jobsDb = '';
        for await (const entry of readTarGz(archive)) {
          names.add(entry.name);
          if (entry.name === 'jobs.db') jobsDb = (await entry.read(64 * 1024 * 1024)).toString('utf8');
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

  it('writes a name longer than 100 bytes so that tar lists and extracts it', async () => {
    const dataDir = await tempDir();
    const name = `${'long-name-'.repeat(20)}.png`;
    const image = crypto.randomBytes(10_000);
    await fs.writeFile(path.join(dataDir, 'jobs.db'), '');
    await fs.mkdir(path.join(dataDir, 'files'));
    await fs.writeFile(path.join(dataDir, 'files', name), image);
    const archive = path.join(await tempDir(), 'data.tar.gz');
    await backupDataDir(dataDir, archive);
    expect(execFileSync('tar', ['tzf', archive], { encoding: 'utf8' }).trim().split('\n')).toEqual(['jobs.db', `files/${name}`, 'backup.json']);
    const work = await tempDir();
    execFileSync('tar', ['xzf', archive, '-C', work]);
    expect((await fs.readFile(path.join(work, 'files', name))).equals(image)).toBe(true);
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

describe('job secrets and backups', () => {
  const SECRETS = ['hdr-b4ckup-s3cret', 'cookie-b4ckup-s3cret', 'pw-b4ckup-s3cret'];
  const withSecrets = () => ({
    url: `${fixtures.url}/opt/echo.html`,
    headers: { 'X-Secret': SECRETS[0] },
    cookies: [{ name: 'sid', value: SECRETS[1] }],
    http_auth: { username: 'reader', password: SECRETS[2] },
  });

  /** What every sealed value in the files under `dir` opens to with `box` (values sealed under another key are skipped). */
  async function openedValues(dir: string, box: SecretBox): Promise<Array<{ file: string; value: string }>> {
    const opened: Array<{ file: string; value: string }> = [];
    for (const file of await filesUnder(dir)) {
      const text = (await fs.readFile(file)).toString('latin1');
      for (const [sealed] of text.matchAll(/v1\.[A-Za-z0-9_-]{30,}/g)) {
        try {
          opened.push({ file: path.relative(dir, file), value: JSON.stringify(box.open(sealed)) });
        } catch {
          // not sealed under this key
        }
      }
    }
    return opened;
  }

  it('a backup taken while the server runs, unpacked, and the data directory itself hold no secret of a job that has ended', async () => {
    const server = await startTestServer({ browsers: 1 });
    try {
      const { key } = await server.account();
      const created = await (await server.v1('POST', '/screenshot', key, withSecrets())).json();
      const job = await waitForJob(server, key, created.job_id);
      expect(job.status).toBe('completed');
      const page = await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=1`, key)).json();
      // The page got them.
      expect(page.page_source).toContain(SECRETS[0]);

      const archive = path.join(await tempDir(), 'data.tar.gz');
      const backup = await runCli(['backup', '--out', archive, '--data', server.dataDir]);
      expect(backup.code, backup.stderr).toBe(0);
      const unpacked = await tempDir();
      execFileSync('tar', ['xzf', archive, '-C', unpacked]);
      // The key is packed (render-link secrets are sealed under it): whatever it opens must not be a job's secret.
      const packedKey = await fs.readFile(path.join(unpacked, SECRET_KEY_FILE));
      expect(packedKey.length).toBe(32);
      expect(packedKey.equals(await fs.readFile(path.join(server.dataDir, SECRET_KEY_FILE)))).toBe(true);
      const box = SecretBox.forDataDir(unpacked);
      for (const [where, dir] of [
        ['the backup', unpacked],
        ['the data directory', server.dataDir],
      ] as const) {
        for (const { file, value } of await openedValues(dir, box)) {
          for (const secret of SECRETS) expect(value.includes(secret), `${secret} opens from ${file} in ${where}`).toBe(false);
        }
        for (const file of await filesUnder(dir)) {
          const text = await fs.readFile(file, 'latin1');
          if (file.includes(`${path.sep}sources${path.sep}`)) continue; // the page source echoes what the page received
          for (const secret of SECRETS) expect(text.includes(secret), `${secret} in clear in ${file}`).toBe(false);
        }
      }
    } finally {
      await server.close();
    }
  });

  it("holds an account's storage destination with its credentials sealed only, which the restored key opens", async () => {
    const server = await startTestServer({ browsers: 1 });
    try {
      const { accountId } = await server.account();
      const credentials = { access_key_id: 'AKIABACKUPKEY0000042', secret_access_key: 'backup-destination-s3cret' };
      const put = await server.admin('PUT', `/accounts/${accountId}/storage`, { endpoint: 'https://s3.example.test', bucket: 'backed-up', ...credentials });
      expect(put.status).toBe(200);
      const archive = path.join(await tempDir(), 'data.tar.gz');
      await backupDataDir(server.dataDir, archive);
      const unpacked = await tempDir();
      execFileSync('tar', ['xzf', archive, '-C', unpacked]);
      for (const file of await filesUnder(unpacked)) {
        const text = await fs.readFile(file, 'latin1');
        for (const secret of Object.values(credentials)) expect(text.includes(secret), `${secret} in clear in ${file}`).toBe(false);
      }
      const [record] = (await fs.readFile(path.join(unpacked, 'destinations.db'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      expect(record).toMatchObject({ _id: accountId, bucket: 'backed-up' });
      expect(SecretBox.forDataDir(unpacked).open(record.sealed_credentials)).toEqual(credentials);
    } finally {
      await server.close();
    }
  });

  it('a job waiting with secrets keeps them over a restart; one restored from a backup fails saying they are not kept', async () => {
    // A test server's close() removes its directory: srv.close() stops it and keeps the directory.
    const dataDir = path.join(await tempDir(), 'data');
    const server = await startTestServer({ browsers: 1, dataDir });
    let key: string;
    let waiting: string;
    const archive = path.join(await tempDir(), 'data.tar.gz');
    try {
      ({ key } = await server.account());
      expect((await server.admin('POST', '/queue/pause')).status).toBeLessThan(300);
      waiting = (await (await server.v1('POST', '/screenshot', key, withSecrets())).json()).job_id;
      const backup = await runCli(['backup', '--out', archive, '--data', dataDir]);
      expect(backup.code, backup.stderr).toBe(0);
    } finally {
      await server.srv.close();
    }
    // The archive of a server with a job waiting holds neither the secrets nor anything sealed that opens to them.
    const unpacked = await tempDir();
    execFileSync('tar', ['xzf', archive, '-C', unpacked]);
    for (const { value } of await openedValues(unpacked, SecretBox.forDataDir(unpacked))) {
      for (const secret of SECRETS) expect(value).not.toContain(secret);
    }

    const again = await startTestServer({ browsers: 1, dataDir });
    try {
      const job = await waitForJob(again, key, waiting);
      expect(job.status).toBe('completed');
      const page = await (await again.v1('GET', `/screenshot/${waiting}?include_source=1`, key)).json();
      expect(page.page_source).toContain(SECRETS[0]);
      expect(page.page_source).toContain(SECRETS[1]);
    } finally {
      await again.close();
    }

    const target = path.join(await tempDir(), 'restored');
    expect((await runCli(['restore', '--from', archive, '--data', target])).code).toBe(0);
    const restored = await startTestServer({ browsers: 1, dataDir: target });
    try {
      const job = await waitForJob(restored, key, waiting);
      expect(job).toMatchObject({ status: 'failed' });
      expect(job.error).toMatch(/headers, cookies or credentials are no longer kept/);
    } finally {
      await restored.close();
    }
  }, 180_000);
});
