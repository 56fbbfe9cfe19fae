import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { migrate, MIGRATIONS } from '../../server/store/pg/migrations.js';
import { importDataDir } from '../../server/store/pg/pg-import.js';
import { PgMonitorStore } from '../../server/store/pg/pg-monitor-store.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { monitorRecord, newAccount } from './conformance-records.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
});

describe('a cluster database from before monitor secrets were kept apart', () => {
  it("moves each monitor's sealed secrets out of its record into monitor_secrets", async () => {
    const pool = createPool(await server.createDatabase(), silentLogger);
    try {
      const step = MIGRATIONS.findIndex((m) => m.name === 'monitor secrets apart');
      await migrate(pool, silentLogger, MIGRATIONS.slice(0, step));
      const doc = (id: string, sealed: string | null) => JSON.stringify({ _id: id, account_id: 'acc1', created_at: 1, next_run_at: 1, paused: false, secret_fields: sealed ? ['cookies'] : [], sealed_secrets: sealed });
      await pool.query('INSERT INTO monitors (id, doc) VALUES ($1, $2::jsonb), ($3, $4::jsonb)', ['mon_a', doc('mon_a', 'v1.legacy-sealed'), 'mon_b', doc('mon_b', null)]);
      await migrate(pool, silentLogger);
      const store = new PgMonitorStore(pool);
      expect(await store.secrets('mon_a')).toBe('v1.legacy-sealed');
      expect(await store.secrets('mon_b')).toBeNull();
      const { rows } = await pool.query<{ doc: string }>('SELECT doc::text FROM monitors');
      for (const row of rows) expect(row.doc).not.toContain('sealed_secrets');
    } finally {
      await pool.end();
    }
  });

  it("an import of a data directory copies each monitor's sealed secrets into monitor_secrets", async () => {
    const dir = await tempDir('sa-import-monitor-secrets-');
    const url = await server.createDatabase();
    const pool = createPool(url, silentLogger);
    try {
      const stores = await openNedbStores(dir, silentLogger);
      const account = await stores.accounts.insert(newAccount());
      const monitor = monitorRecord({ _id: 'mon_imported', account_id: account._id, secret_fields: ['cookies'] });
      await stores.monitors.insert(monitor, 'v1.imported-sealed', 100);
      await stores.compact();
      await stores.close();
      await importDataDir(dir, url, silentLogger);
      expect(await new PgMonitorStore(pool).secrets('mon_imported')).toBe('v1.imported-sealed');
    } finally {
      await pool.end();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
