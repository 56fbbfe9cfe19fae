import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { backupDataDir, restoreDataDir } from '../../server/cli/backup.js';
import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, tempDir } from '../helpers/test-server.js';

// A running batch's items (their cookies and headers among them) and backups: a backup holds no
// secret, so a batch restored from one is cancelled, saying why. A scripted engine; the backup
// and restore of the CLI, called in the process.

const SECRET = 'cookie-b4tch-s3cret';

describe('a running batch and backups', () => {
  it('leaves the batch items out of the archive and of the data directory once the batch ends; a restored server cancels the batch it cannot feed', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const server = await startTestServer({ dataDir, concurrency: 1, browsers: 1, ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
    const archive = path.join(await tempDir(), 'data.tar.gz');
    let key: string;
    let id: string;
    try {
      ({ key } = await server.account());
      server.srv.services.queue.pause();
      const items = Array.from({ length: 10 }, (_, i) => ({ url: `http://127.0.0.1:9/${i}` }));
      ({ batch_id: id } = await (await server.v1('POST', '/batches', key, { items, cookies: [{ name: 'sid', value: SECRET }] })).json());
      await backupDataDir(dataDir, archive);
      // Once the batch ends, no line of the data directory keeps its items.
      const other = await (await server.v1('POST', '/batches', key, { items: [{ url: 'http://127.0.0.1:9/x' }], headers: { 'X-Token': SECRET } })).json();
      expect(await fs.readFile(path.join(dataDir, 'batch-items.db'), 'utf8')).toContain(other.batch_id);
      expect((await server.v1('DELETE', `/batches/${other.batch_id}`, key)).status).toBe(200);
      expect(await fs.readFile(path.join(dataDir, 'batch-items.db'), 'utf8')).not.toContain(other.batch_id);
    } finally {
      await server.srv.close();
    }
    const unpacked = await tempDir();
    execFileSync('tar', ['xzf', archive, '-C', unpacked]);
    const names = await fs.readdir(unpacked);
    expect(names).toContain('batches.db');
    expect(names).not.toContain('batch-items.db');

    const target = path.join(await tempDir(), 'restored');
    await restoreDataDir(archive, target);
    const restored = await startTestServer({ dataDir: target, concurrency: 1, browsers: 1, ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
    try {
      await expect.poll(async () => (await (await restored.v1('GET', `/batches/${id}`, key)).json()).status).toBe('cancelled');
    } finally {
      await restored.close();
    }
  });
});
