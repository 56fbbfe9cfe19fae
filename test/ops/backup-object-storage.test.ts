import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../helpers/cli-process.js';
import { startS3, type TestS3, useS3Credentials } from '../helpers/s3rver.js';
import { startTestServer, tempDir } from '../helpers/test-server.js';

// backup archives the data directory; with the images in object storage it says they are not in it.

let s3: TestS3;
const dirs: string[] = [];

beforeAll(async () => {
  useS3Credentials();
  s3 = await startS3(['shots']);
});

afterAll(async () => {
  await s3?.close();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

describe('backup with the files in object storage', () => {
  it('archives the data directory and says, in a note line, that the images are not in the archive', async () => {
    const dataDir = await tempDir('sa-backup-s3-');
    dirs.push(dataDir);
    const server = await startTestServer({ dataDir, browsers: 1, objectStorage: { bucket: 'shots', prefix: 'b/', endpoint: s3.endpoint } });
    await server.account();
    await server.srv.close();
    expect(await fs.readdir(dataDir)).not.toContain('files');

    const archive = path.join(dataDir, '..', `${path.basename(dataDir)}.tar.gz`);
    dirs.push(archive);
    const backup = await runCli(['backup', '--out', archive, '--data', dataDir]);
    expect(backup.code).toBe(0);
    const lines = backup.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^backed up \d+ files/);
    expect(lines[1]).toMatch(/^note: the archive holds no images or page sources: they are kept elsewhere \(--files DIR or s3:\/\/…\)/);
  }, 60_000);

  it('says in its help what it does not cover, and so does import', async () => {
    expect((await runCli(['backup', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('images kept elsewhere (--files DIR or s3://…) are not in it');
    expect((await runCli(['import', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('images and page sources are not copied');
  });
});
