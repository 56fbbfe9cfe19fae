import type pg from 'pg';

import type { Logger } from '../../logger.js';
import { createPool } from './pg-pool.js';

/** One step of the schema, applied once, in its own transaction, in version order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The schema of every store. Each table keeps the whole record in `doc` (jsonb, as the services
 * hand it over) and, as generated columns, the fields its reads filter and sort on, so an
 * update writes the record once and its indexed columns cannot disagree with it. Ids and days
 * sort in the C collation, byte by byte, as the NeDB backend compares them; the job list's ties
 * on created_at are broken by id in that order.
 *
 * Steps are only ever appended: a step that shipped is never edited.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'stores',
    sql: `
      CREATE TABLE jobs (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        account_id text GENERATED ALWAYS AS (doc->>'account_id') STORED,
        status text GENERATED ALWAYS AS (doc->>'status') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED,
        completed_at bigint GENERATED ALWAYS AS ((doc->>'completed_at')::bigint) STORED,
        image_file text GENERATED ALWAYS AS (doc->>'image_file') STORED,
        cache_key text GENERATED ALWAYS AS (doc->>'cache_key') STORED,
        expired boolean GENERATED ALWAYS AS ((doc->>'expired')::boolean) STORED
      );
      -- The admin job list, newest first, whole or by account or by state; the history purge reads it oldest first.
      CREATE INDEX jobs_list ON jobs (created_at DESC, id DESC);
      CREATE INDEX jobs_by_account ON jobs (account_id, created_at DESC, id DESC);
      CREATE INDEX jobs_by_status ON jobs (status, created_at DESC, id DESC);
      -- Jobs to run again at start, oldest first.
      CREATE INDEX jobs_unfinished ON jobs (created_at, id) WHERE status IN ('pending', 'processing');
      -- GET /v1/files/<name>, unauthenticated, on every request.
      CREATE INDEX jobs_by_image ON jobs (image_file) WHERE image_file IS NOT NULL;
      CREATE INDEX jobs_by_cache_key ON jobs (cache_key, created_at DESC) WHERE cache_key IS NOT NULL;
      -- The retention sweep: ended jobs whose files are still kept.
      CREATE INDEX jobs_to_expire ON jobs (completed_at) WHERE NOT expired AND status IN ('completed', 'failed');

      CREATE TABLE accounts (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        email text GENERATED ALWAYS AS (doc->>'email') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED
      );
      CREATE INDEX accounts_by_email ON accounts (email);
      CREATE INDEX accounts_list ON accounts (created_at, id);

      CREATE TABLE api_keys (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        account_id text GENERATED ALWAYS AS (doc->>'account_id') STORED,
        hash text GENERATED ALWAYS AS (doc->>'hash') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED
      );
      -- Every API call authenticates by the key's hash; two keys never share one.
      CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (hash);
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at, id);

      -- Calls per account and UTC day, kept after the jobs are gone.
      CREATE TABLE usage_days (
        account_id text NOT NULL,
        day text COLLATE "C" NOT NULL,
        month text COLLATE "C" NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (account_id, day)
      );
      CREATE INDEX usage_days_by_month ON usage_days (account_id, month);
      CREATE INDEX usage_days_by_day ON usage_days (day);

      -- Job ends per UTC hour (the hour's start, epoch ms), counted as jobs end.
      CREATE TABLE hourly_ends (
        hour bigint PRIMARY KEY,
        completed bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0
      );

      -- What the admin saved: one row.
      CREATE TABLE settings (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        doc jsonb NOT NULL
      );

      CREATE TABLE webhook_deliveries (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        job_id text GENERATED ALWAYS AS (doc->>'job_id') STORED,
        status text GENERATED ALWAYS AS (doc->>'status') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED
      );
      CREATE INDEX webhook_deliveries_by_job ON webhook_deliveries (job_id);
      CREATE INDEX webhook_deliveries_list ON webhook_deliveries (created_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at, id) WHERE status = 'pending';
    `,
  },
  {
    version: 2,
    name: 'shared values',
    sql: `
      -- Values every node of a cluster uses alike (the admin token, the key sealing job secrets).
      CREATE TABLE shared_values (
        name text PRIMARY KEY,
        value text NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'unique account e-mail',
    sql: `
      -- Two nodes creating one address at once must not make two accounts.
      CREATE UNIQUE INDEX accounts_email_unique ON accounts (email);
      DROP INDEX accounts_by_email;
    `,
  },
  {
    version: 4,
    name: 'job secrets apart',
    sql: `
      -- The sealed secrets of jobs that have not ended, deleted when they end: never in jobs,
      -- whose rows keep their earlier versions until vacuumed.
      CREATE TABLE job_secrets (
        id text COLLATE "C" PRIMARY KEY,
        sealed text NOT NULL,
        created_at bigint NOT NULL
      );
      INSERT INTO job_secrets (id, sealed, created_at)
        SELECT id, doc->>'sealed_secrets', (extract(epoch FROM now()) * 1000)::bigint FROM jobs
         WHERE status IN ('pending', 'processing') AND jsonb_typeof(doc->'sealed_secrets') = 'string';
      UPDATE jobs SET doc = (doc - 'sealed_secrets') || jsonb_build_object('has_secrets', jsonb_typeof(doc->'sealed_secrets') = 'string')
       WHERE doc ? 'sealed_secrets';
    `,
  },
  {
    version: 5,
    name: 'webhooks due',
    sql: `
      -- Ended jobs whose webhook is not stored yet: every node looks for those a dead node left.
      CREATE INDEX jobs_webhook_due ON jobs (completed_at) WHERE doc->>'webhook_due' = 'true';
    `,
  },
  {
    version: 6,
    name: 'monitors',
    sql: `
      CREATE TABLE monitors (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        account_id text GENERATED ALWAYS AS (doc->>'account_id') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED,
        next_run_at bigint GENERATED ALWAYS AS ((doc->>'next_run_at')::bigint) STORED,
        paused boolean GENERATED ALWAYS AS ((doc->>'paused')::boolean) STORED
      );
      CREATE INDEX monitors_by_account ON monitors (account_id, created_at, id);
      -- The scheduler's look for due occurrences.
      CREATE INDEX monitors_due ON monitors (next_run_at) WHERE NOT paused;
      CREATE TABLE monitor_checks (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        monitor_id text COLLATE "C" GENERATED ALWAYS AS (doc->>'monitor_id') STORED,
        at bigint GENERATED ALWAYS AS ((doc->>'at')::bigint) STORED,
        status text GENERATED ALWAYS AS (doc->>'status') STORED
      );
      CREATE INDEX monitor_checks_timeline ON monitor_checks (monitor_id, at DESC, id DESC);
      CREATE INDEX monitor_checks_pending ON monitor_checks (at) WHERE status = 'pending';
    `,
  },
  {
    version: 7,
    name: 'storage destinations',
    sql: `
      -- Each account's own bucket for customer uploads; the credentials are sealed in doc.
      CREATE TABLE storage_destinations (
        account_id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'monitor secrets apart',
    sql: `
      -- The sealed secrets of monitors (headers, cookies, credentials, html: up to 5 MB): never in
      -- monitors, whose row is written again at every claim and change.
      CREATE TABLE monitor_secrets (
        id text COLLATE "C" PRIMARY KEY REFERENCES monitors (id) ON DELETE CASCADE,
        sealed text NOT NULL
      );
      INSERT INTO monitor_secrets (id, sealed)
        SELECT id, doc->>'sealed_secrets' FROM monitors WHERE jsonb_typeof(doc->'sealed_secrets') = 'string';
      UPDATE monitors SET doc = doc - 'sealed_secrets' WHERE doc ? 'sealed_secrets';
      -- The history period's purge of checks, oldest first.
      CREATE INDEX monitor_checks_by_time ON monitor_checks (at, id);
    `,
  },
  {
    version: 9,
    name: 'idempotency keys',
    sql: `
      -- What POST /v1/screenshot answered each Idempotency-Key of an account, for a day.
      CREATE TABLE idempotency_keys (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        until bigint GENERATED ALWAYS AS ((doc->>'until')::bigint) STORED
      );
      CREATE INDEX idempotency_keys_by_until ON idempotency_keys (until);
    `,
  },
  {
    version: 10,
    name: 'saved logins',
    sql: `
      -- An account's saved logins; their user names, passwords and sessions sealed apart in
      -- login_secrets, whose row is replaced whole and removed with the login.
      CREATE TABLE logins (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        account_id text COLLATE "C" GENERATED ALWAYS AS (doc->>'account_id') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED
      );
      CREATE INDEX logins_by_account ON logins (account_id, created_at, id);
      CREATE TABLE login_secrets (
        id text COLLATE "C" PRIMARY KEY REFERENCES logins (id) ON DELETE CASCADE,
        sealed text NOT NULL
      );
    `,
  },
  {
    version: 11,
    name: 'batches',
    sql: `
      -- POST /v1/batches: the batches, and their sealed items apart (written once, deleted at the batch's end).
      CREATE TABLE batches (
        id text COLLATE "C" PRIMARY KEY,
        doc jsonb NOT NULL,
        status text GENERATED ALWAYS AS (doc->>'status') STORED,
        created_at bigint GENERATED ALWAYS AS ((doc->>'created_at')::bigint) STORED
      );
      CREATE INDEX batches_running ON batches (created_at, id) WHERE status = 'running';
      -- The control panel's list, newest first.
      CREATE INDEX batches_list ON batches (created_at DESC, id DESC);
      CREATE TABLE batch_items (
        id text COLLATE "C" PRIMARY KEY,
        sealed text NOT NULL
      );
    `,
  },
];

/**
 * The session advisory lock migrations are applied under (an arbitrary constant, 'SAmigr' in
 * ASCII): nodes starting together wait for the first, then find its steps applied.
 */
const MIGRATION_LOCK = 0x53_41_6d_69_67_72;

/**
 * Applies the steps of `steps` the database has not had, in order, each in its own transaction
 * and recorded in schema_migrations; returns the versions applied (none when it was up to date).
 */
export async function migrate(pool: pg.Pool, log: Logger, steps: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  for (let i = 1; i < steps.length; i++) {
    if (steps[i].version <= steps[i - 1].version) throw new Error(`migration ${steps[i].version} is listed after ${steps[i - 1].version}`);
  }
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    // A step may take long on a large table, and the nodes waiting for the lock wait as long.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      const known = new Set(steps.map((s) => s.version));
      const unknown = [...done].filter((v) => !known.has(v));
      if (unknown.length > 0) log.warn(`the database has schema versions this node does not know (${unknown.join(', ')}): a newer node migrated it`);
      const applied: number[] = [];
      for (const step of steps) {
        if (done.has(step.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(step.sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [step.version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`schema migration ${step.version} (${step.name}) failed: ${(err as Error).message}`, { cause: err });
        }
        log.info(`applied schema migration ${step.version} (${step.name})`);
        applied.push(step.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      await client.query('RESET statement_timeout');
    }
  } catch (err) {
    failure = err as Error;
    throw err;
  } finally {
    // A connection that failed part-way may still hold the lock or a transaction: closed, not pooled.
    client.release(failure);
  }
}

/** `screenshot-appliance migrate --database URL`: brings the schema up to date; the versions applied. */
export async function runMigrations(url: string, logger: Logger): Promise<number[]> {
  const log = logger.child({ component: 'migrations' });
  const pool = createPool(url, log, { maxConnections: 1 });
  try {
    return await migrate(pool, log);
  } finally {
    await pool.end();
  }
}
