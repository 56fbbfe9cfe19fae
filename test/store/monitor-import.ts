import fs from 'node:fs/promises';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { importDataDir } from '../../server/store/pg/pg-import.js';
import { PgMonitorStore } from '../../server/store/pg/pg-monitor-store.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import type { MonitorRecord } from '../../server/store/records/monitor-record.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { monitorRecord, newAccount } from './conformance-records.js';

/**
 * A data directory (named after `prefix`) holding one monitor of a new account, made of
 * `fields`, with `sealed` kept apart from its record; imported into a new database of
 * `postgres`. Answers what that database then keeps apart for the monitor.
 */
export async function importedMonitorSecrets(postgres: TestPostgres, prefix: string, fields: Partial<MonitorRecord>, sealed: string): Promise<string | null> {
  const dir = await tempDir(prefix);
  const url = await postgres.createDatabase();
  const pool = createPool(url, silentLogger);
  try {
    const stores = await openNedbStores(dir, silentLogger);
    const account = await stores.accounts.insert(newAccount());
    const monitor = monitorRecord({ ...fields, account_id: account._id });
    await stores.monitors.insert(monitor, sealed, 100);
    await stores.compact();
    await stores.close();
    await importDataDir(dir, url, silentLogger);
    return await new PgMonitorStore(pool).secrets(monitor._id);
  } finally {
    await pool.end();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
