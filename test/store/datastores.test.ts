import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { ApiKeyService } from '../../server/auth/api-keys.js';
import { SecretBox } from '../../server/crypto/secret-box.js';
import { lineLogger, silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { systemClock } from '../../server/time.js';
import { tempDir } from '../helpers/temp-dir.js';

let dir: string;
afterEach(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** The fields jobs.db's index definitions name (NeDB writes each definition into the file). */
const indexedFields = async (file: string) =>
  (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.includes('$$indexCreated'))
    .map((line) => (JSON.parse(line) as { $$indexCreated: { fieldName: string } }).$$indexCreated.fieldName);

const sha256 = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

describe('the datastores', () => {
  it('index the jobs by image file, the field GET /v1/files looks them up by', async () => {
    dir = await tempDir();
    await openNedbStores(dir, silentLogger);
    expect(await indexedFields(path.join(dir, 'jobs.db'))).toContain('image_file');
    expect(await indexedFields(path.join(dir, 'jobs.db'))).not.toContain('image_token');
  });

  it('count the hourly ends of a data directory from before stats.db once, from its jobs of the last two days', async () => {
    dir = await tempDir();
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const ended = (id: string, status: string, completedAt: number) =>
      JSON.stringify({ _id: id, status, created_at: completedAt - 1000, completed_at: completedAt, expired: false, image_file: null });
    const lines = [
      ended('a', 'completed', hour + 10),
      ended('b', 'completed', hour + 20),
      ended('c', 'failed', hour + 30),
      ended('d', 'completed', hour - 3_600_000 + 5),
      ended('old', 'completed', hour - 5 * 86_400_000),
      JSON.stringify({ _id: 'w', status: 'pending', created_at: hour, completed_at: null }),
    ];
    await fs.writeFile(path.join(dir, 'jobs.db'), lines.join('\n') + '\n');
    const first = await openNedbStores(dir, silentLogger);
    expect(await first.stats.hoursSince(hour - 86_400_000)).toEqual([
      { hour: hour - 3_600_000, completed: 1, failed: 0 },
      { hour, completed: 2, failed: 1 },
    ]);
    // Counted once: stats.db is there now.
    const again = await openNedbStores(dir, silentLogger);
    expect(await again.stats.hoursSince(hour - 86_400_000)).toEqual(await first.stats.hoursSince(hour - 86_400_000));
  });

  it('open a keys.db holding two records with one hash, report it, and refuse both keys', async () => {
    dir = await tempDir();
    const key = `sa_${crypto.randomBytes(32).toString('base64url')}`;
    const other = `sa_${crypto.randomBytes(32).toString('base64url')}`;
    const record = (id: string, hash: string) =>
      JSON.stringify({ _id: id, account_id: 'acc', name: 'k', hash, prefix: key.slice(0, 9), ip_whitelist: [], created_at: 1, last_used_at: null, revoked: false });
    await fs.writeFile(
      path.join(dir, 'keys.db'),
      [record('k1', sha256(key)), record('k2', sha256(key)), record('k3', sha256(other))].join('\n') + '\n',
    );
    const lines: string[] = [];
    const stores = await openNedbStores(dir, lineLogger((line) => lines.push(line)));
    expect(lines.join('\n')).toMatch(/keys\.db holds 1 key hash\(es\) shared by several records \(k1 = k2\)/);

    const keys = new ApiKeyService(stores.keys, systemClock, SecretBox.forDataDir(dir));
    expect(await keys.authenticate(key)).toBeNull();
    expect((await keys.authenticate(other))?._id).toBe('k3');
  });
});
