import pg from 'pg';

import type { Logger } from '../../logger.js';
import { StoreUnavailableError } from '../stores.js';

/** How a node talks to PostgreSQL. */
export interface PgPoolOptions {
  /** Connections this node holds at most; a cluster's nodes together must stay under the server's max_connections. @default 10 */
  maxConnections?: number;
  /** How long a query waits for a free connection, or for a new one to open. @default 10000 */
  connectionTimeoutMs?: number;
  /** The server cancels any one statement that runs longer. @default 30000 */
  statementTimeoutMs?: number;
}

const INT8 = 20;

/**
 * A bounded pool for `url`. Times and counts are bigint columns, which node-postgres hands back
 * as text (a bigint may exceed 2^53); every one here is epoch milliseconds or a count, so they
 * are read as numbers, on this pool only.
 */
export function createPool(url: string, log: Logger, options: PgPoolOptions = {}): pg.Pool {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8, Number);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    // A transaction left open by a bug would hold its row and advisory locks for every node.
    idle_in_transaction_session_timeout: 60_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'screenshot-appliance',
    types,
  });
  // An idle connection the server ends (a restart, a failover) is reported here; without a
  // listener the error would end the process. The pool opens a new one on the next query.
  pool.on('error', (err) => log.warn({ err }, `PostgreSQL connection lost: ${err.message}`));
  return guarded(pool);
}

/** SQLSTATEs of a server that answered "not now": connection exceptions (08), shutting down or starting (57P01-57P03), too many connections (53300). */
const NOT_NOW = /^(08|57P0[123]|53300)/;

/**
 * What a failed query or connection means. The server's own refusals (pg.DatabaseError: a
 * constraint, a statement time-out) stay as they are; "not now" answers, and failures with no
 * answer from the server at all (a refused or broken connection, the pool's connect time-out),
 * become StoreUnavailableError.
 */
export function unavailableOr(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  if (err instanceof pg.DatabaseError) return NOT_NOW.test(err.code ?? '') ? new StoreUnavailableError(err) : err;
  return new StoreUnavailableError(err);
}

/** Why the database failed, in words: the driver's own message where the failure was wrapped. */
export function failureText(err: unknown): string {
  const shown = err instanceof StoreUnavailableError && err.cause instanceof Error ? err.cause : err;
  return shown instanceof Error ? shown.message : String(shown);
}

/** The pool with its query and connect mapping failures through unavailableOr; everything else as it is. */
function guarded(pool: pg.Pool): pg.Pool {
  return new Proxy(pool, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (prop !== 'query' && prop !== 'connect') return method.bind(target);
      return (...args: unknown[]) => {
        const result = method.apply(target, args);
        return result instanceof Promise
          ? result.catch((err: unknown) => {
              throw unavailableOr(err);
            })
          : result;
      };
    },
  });
}

/** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (err) {
    // A connection whose rollback fails is in an unknown state: it is closed, not pooled again.
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (rollbackErr: Error) => rollbackErr,
    );
    client.release(broken);
    // Only what came from PostgreSQL, or a failure that also broke the connection, says the database is unavailable; `work`'s own errors pass as they are.
    throw broken || err instanceof pg.DatabaseError ? unavailableOr(err) : err;
  }
}

/** The `doc` column of every row `sql` selects (each store keeps its records whole in `doc`). */
export async function selectDocs<T>(pool: pg.Pool, sql: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query<{ doc: T }>(sql, values)).rows.map((r) => r.doc);
}

/** The `doc` of the first row `sql` selects, or null when it selects none. */
export async function selectDoc<T>(pool: pg.Pool, sql: string, values: unknown[] = []): Promise<T | null> {
  return (await pool.query<{ doc: T }>(sql, values)).rows[0]?.doc ?? null;
}

/**
 * A value as jsonb text. PostgreSQL's jsonb cannot hold the character U+0000 (a page title
 * may); it is stored as U+FFFD rather than failing the write of a job's end.
 */
export function toJsonb(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' && v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v));
}
