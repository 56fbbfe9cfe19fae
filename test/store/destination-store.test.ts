// The accounts' storage destinations on both backends: kept whole over a reopening, replaced,
// removed, and their credentials sealed at rest (the data directory's files and the
// database's files never hold the secret or the access key id).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SecretBox } from '../../server/crypto/secret-box.js';
import { NotFoundError, ValidationError } from '../../server/domain-errors.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { openPgStores } from '../../server/store/pg/pg-stores.js';
import type { Stores } from '../../server/store/stores.js';
import { systemClock } from '../../server/time.js';
import { StorageDestinations } from '../../server/uploads/destinations.js';
import { filesHolding } from '../helpers/files-under.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newAccount } from './conformance-records.js';

const credentials = () => ({
  access_key_id: `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`,
  secret_access_key: crypto.randomBytes(30).toString('base64url'),
});

describe.each(['nedb', 'postgres'] as const)('storage destinations on %s', (backend) => {
  let dataDir: string;
  let postgres: TestPostgres | undefined;
  let url: string | undefined;
  const opened: Stores[] = [];
  const open = async () => {
    const stores = backend === 'nedb' ? await openNedbStores(dataDir, silentLogger) : await openPgStores(url as string, silentLogger);
    opened.push(stores);
    return stores;
  };
  const service = (stores: Stores) =>
    new StorageDestinations({ store: stores.destinations, accounts: stores.accounts, secrets: SecretBox.forDataDir(dataDir), clock: systemClock });

  beforeAll(async () => {
    dataDir = await tempDir('sa-destinations-');
    if (backend === 'postgres') {
      postgres = await startPostgres();
      url = await postgres.createDatabase();
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await postgres?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('keeps a destination over a reopening, shows it without the secret, replaces it and removes it', async () => {
    const stores = await open();
    const account = await stores.accounts.insert(newAccount());
    const first = credentials();
    const shown = await service(stores).put(account._id, { endpoint: 'https://s3.example.test/', bucket: 'shots-bucket', prefix: 'a/b/', ...first });
    expect(shown).toMatchObject({ account_id: account._id, endpoint: 'https://s3.example.test', bucket: 'shots-bucket', prefix: 'a/b', region: 'us-east-1', path_style: false });
    expect(shown.access_key_id).toBe(`${first.access_key_id.slice(0, 4)}…${first.access_key_id.slice(-4)}`);
    expect(JSON.stringify(shown)).not.toContain(first.secret_access_key);

    const again = service(await open());
    expect(await again.view(account._id)).toEqual(shown);
    expect((await again.open(account._id))?.credentials).toEqual(first);

    const second = credentials();
    await again.put(account._id, { endpoint: 'http://minio.example.test:9000', bucket: 'other.bucket', region: 'eu-west-1', path_style: true, ...second });
    expect(await again.view(account._id)).toMatchObject({ bucket: 'other.bucket', region: 'eu-west-1', path_style: true, prefix: '' });
    expect((await again.open(account._id))?.credentials).toEqual(second);

    await again.remove(account._id);
    await expect(again.view(account._id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(again.remove(account._id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await again.open(account._id)).toBeNull();
  });

  it('refuses a destination for no such account, and a request to upload for an account without one', async () => {
    const stores = await open();
    const destinations = service(stores);
    await expect(destinations.put('no-such-account', { endpoint: 'https://s3.example.test', bucket: 'abc', ...credentials() })).rejects.toBeInstanceOf(NotFoundError);
    const account = await stores.accounts.insert(newAccount());
    await expect(destinations.requireFor(account._id)).rejects.toMatchObject({ name: 'ValidationError', field: 'upload' });
    await destinations.put(account._id, { endpoint: 'https://s3.example.test', bucket: 'abc', ...credentials() });
    await expect(destinations.requireFor(account._id)).resolves.toBeUndefined();
    await expect(destinations.put(account._id, { endpoint: 'ftp://s3.example.test', bucket: 'abc', ...credentials() })).rejects.toBeInstanceOf(ValidationError);
  });

  it('never keeps the secret or the whole access key id in clear on disk', async () => {
    const stores = await open();
    const account = await stores.accounts.insert(newAccount());
    const given = credentials();
    await service(stores).put(account._id, { endpoint: 'https://s3.example.test', bucket: 'sealed-bucket', ...given });
    // A second write of the same destination, as an admin correcting it.
    await service(stores).put(account._id, { endpoint: 'https://s3.example.test', bucket: 'sealed-bucket2', ...given });
    if (backend === 'nedb') {
      expect(await filesHolding(dataDir, 'sealed-bucket2'), 'the destination is on disk').not.toEqual([]);
      expect(await filesHolding(dataDir, given.secret_access_key)).toEqual([]);
      expect(await filesHolding(dataDir, given.access_key_id)).toEqual([]);
      return;
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ row: string }>('SELECT t::text AS row FROM storage_destinations t');
      expect(rows.map((r) => r.row).join('\n')).toContain('sealed-bucket2');
      expect(rows.map((r) => r.row).join('\n')).not.toContain(given.secret_access_key);
      await client.query('CHECKPOINT');
      const { rows: files } = await client.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
      expect(await filesHolding(files[0].dir, 'sealed-bucket2'), 'the destination is on disk').not.toEqual([]);
      expect(await filesHolding(files[0].dir, given.secret_access_key)).toEqual([]);
      expect(await filesHolding(files[0].dir, given.access_key_id)).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
