import type pg from 'pg';

import type { Logger } from '../../logger.js';
import type { Stores } from '../stores.js';
import { migrate } from './migrations.js';
import { PgAccountStore } from './pg-account-store.js';
import { PgBatchStore } from './pg-batch-store.js';
import { PgDeliveryStore } from './pg-delivery-store.js';
import { PgDestinationStore } from './pg-destination-store.js';
import { PgIdempotencyStore } from './pg-idempotency-store.js';
import { PgJobSecretStore } from './pg-job-secret-store.js';
import { PgJobStore } from './pg-job-store.js';
import { PgKeyStore } from './pg-key-store.js';
import { PgLoginStore } from './pg-login-store.js';
import { PgMonitorStore } from './pg-monitor-store.js';
import { createPool, failureText, type PgPoolOptions } from './pg-pool.js';
import { PgSettingsStore } from './pg-settings-store.js';
import { PgSharedValues } from './pg-shared-values.js';
import { PgStatsStore } from './pg-stats-store.js';
import { PgUsageStore } from './pg-usage-store.js';

/** The PostgreSQL store could not be opened at start (unreachable, refused, or its schema could not be brought up to date). */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}

/** The database's address for a message: host, port and name, never the user or the password. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return 'the given URL';
  }
}

/**
 * Opens every store in the PostgreSQL database at `url` (`postgres://user:password@host:port/db`),
 * shared by every node of a cluster. The schema is brought up to date first; nodes starting
 * together apply each step once (see migrate).
 */
export async function openPgStores(url: string, logger: Logger, options: PgPoolOptions = {}): Promise<Stores> {
  const log = logger.child({ component: 'stores' });
  const pool = createPool(url, log, options);
  try {
    await migrate(pool, log);
  } catch (err) {
    await pool.end();
    throw new StoreOpenError(`could not open the PostgreSQL store at ${where(url)}: ${failureText(err)}`, { cause: err });
  }
  let closing: Promise<void> | undefined;
  return {
    backend: 'postgres',
    accounts: new PgAccountStore(pool),
    keys: new PgKeyStore(pool),
    jobs: new PgJobStore(pool),
    jobSecrets: new PgJobSecretStore(pool),
    usage: new PgUsageStore(pool),
    stats: new PgStatsStore(pool),
    settings: new PgSettingsStore(pool),
    deliveries: new PgDeliveryStore(pool),
    monitors: new PgMonitorStore(pool),
    logins: new PgLoginStore(pool),
    destinations: new PgDestinationStore(pool),
    shared: new PgSharedValues(pool),
    idempotency: new PgIdempotencyStore(pool),
    batches: new PgBatchStore(pool),
    health: async () => ({ postgres: await reachable(pool) }),
    // Autovacuum reclaims what deletes leave; there is nothing to fold by hand.
    compact: async () => undefined,
    close: () => (closing ??= pool.end()),
  };
}

/** How long a readiness probe waits for the database. */
const HEALTH_TIMEOUT_MS = 2_000;

/** `ok` when the database answers a query within HEALTH_TIMEOUT_MS, otherwise why not. */
async function reachable(pool: pg.Pool): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${HEALTH_TIMEOUT_MS} ms`), HEALTH_TIMEOUT_MS);
  });
  const answer = pool.query('SELECT 1').then(
    () => 'ok',
    (err: unknown) => `unreachable: ${failureText(err)}`,
  );
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}
