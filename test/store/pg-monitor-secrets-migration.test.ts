import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { migrate, MIGRATIONS } from '../../server/store/pg/migrations.js';
import { PgMonitorStore } from '../../server/store/pg/pg-monitor-store.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { importedMonitorSecrets } from './monitor-import.js';

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
    const fields = { _id: 'mon_imported', secret_fields: ['cookies'] };
    expect(await importedMonitorSecrets(server, 'sa-import-monitor-secrets-', fields, 'v1.imported-sealed')).toBe('v1.imported-sealed');
  });
});
