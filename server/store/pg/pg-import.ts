import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Logger } from '../../logger.js';
import { ADMIN_TOKEN_FILE, SECRET_KEY_FILE, SHARED_ADMIN_TOKEN, SHARED_SECRET_KEY } from '../data-dir.js';
import { acquireDataLock } from '../data-lock.js';
import { JOB_SECRETS_DIR } from '../nedb/job-secret-files.js';
import { MONITOR_SECRETS_DIR } from '../nedb/monitor-secret-files.js';
import { LOGIN_SECRETS_DIR } from '../nedb/nedb-login-store.js';
import { openNedbStores } from '../nedb/nedb-stores.js';
import { hasEnded } from '../records/job-record.js';
import { migrate } from './migrations.js';
import { PgJobSecretStore } from './pg-job-secret-store.js';
import { createPool, inTransaction, toJsonb } from './pg-pool.js';

/** Records copied per statement. */
const BATCH = 1000;

import { ImportError } from './import-error.js';

export { ImportError };

/** How many records of each kind an import copied. */
export type ImportCounts = Record<'accounts' | 'keys' | 'jobs' | 'usage days' | 'webhook deliveries' | 'monitors' | 'monitor checks', number>;

/**
 * Copies a NeDB data directory into the PostgreSQL database at `url`, keeping every id, so
 * image addresses, job ids, key ids and webhook ids stay valid: accounts, keys, jobs, usage per
 * day, the hourly figures, the saved settings, webhook deliveries, monitors and their checks, the
 * accounts' storage destinations and saved logins, the admin token and the key
 * sealing job secrets (jobs and render-link secrets sealed under it stay readable). Records the
 * database already holds (an import run twice) are left as they are. The directory's server must
 * be stopped (its lock is taken); its files are read from a copy, so the directory is not changed.
 * Images and page sources stay where they are: point --files at that directory, or copy them.
 */
export async function importDataDir(from: string, url: string, logger: Logger, progress: (line: string) => void = () => undefined): Promise<ImportCounts> {
  await fs.access(path.join(from, 'jobs.db')).catch(() => {
    throw new ImportError(`${from} is not a data directory of the service (it has no jobs.db)`);
  });
  const lock = acquireDataLock(from);
  const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-import-'));
  const pool = createPool(url, logger, { maxConnections: 2, statementTimeoutMs: 0 });
  try {
    for (const name of await fs.readdir(from)) {
      if (name.endsWith('.db')) await fs.copyFile(path.join(from, name), path.join(copy, name));
    }
    for (const dir of [JOB_SECRETS_DIR, MONITOR_SECRETS_DIR, LOGIN_SECRETS_DIR]) await fs.cp(path.join(from, dir), path.join(copy, dir), { recursive: true }).catch(() => undefined);
    const stores = await openNedbStores(copy, logger);
    await migrate(pool, logger);
    const accounts = await stores.accounts.list();
    const keys = (await Promise.all(accounts.map((a) => stores.keys.byAccount(a._id)))).flat();
    const jobs = await stores.jobs.list({ limit: Number.MAX_SAFE_INTEGER });
    const usage = await stores.usage.since(undefined, '0000-00-00');
    const deliveries = await stores.deliveries.list({ limit: Number.MAX_SAFE_INTEGER });
    const hours = await stores.stats.hoursSince(0);
    const settings = await stores.settings.load();
    const monitors = (await Promise.all(accounts.map((a) => stores.monitors.list(a._id)))).flat();
    const checks = (await Promise.all(monitors.map((m) => stores.monitors.checks(m._id, { limit: Number.MAX_SAFE_INTEGER })))).flat();

    const copyDocs = async (table: string, docs: ReadonlyArray<{ _id: string }>, what: string) => {
      for (let i = 0; i < docs.length; i += BATCH) {
        await pool.query(
          `INSERT INTO ${table} (id, doc) SELECT d->>'_id', d FROM jsonb_array_elements($1::jsonb) AS d ON CONFLICT (id) DO NOTHING`,
          [toJsonb(docs.slice(i, i + BATCH))],
        );
        progress(`${what}: ${Math.min(i + BATCH, docs.length)} of ${docs.length}`);
      }
    };
    await copyDocs('accounts', accounts, 'accounts');
    await copyDocs('api_keys', keys, 'keys');
    await copyDocs('jobs', jobs, 'jobs');
    // The sealed secrets of the jobs still waiting, which run in the cluster.
    const secrets: Array<{ id: string; sealed: string }> = [];
    for (const job of jobs) {
      const sealed = job.has_secrets && !hasEnded(job.status) ? await stores.jobSecrets.get(job._id) : null;
      if (sealed !== null) secrets.push({ id: job._id, sealed });
    }
    await new PgJobSecretStore(pool).put(secrets);
    await copyDocs('webhook_deliveries', deliveries, 'webhook deliveries');
    await copyDocs('monitors', monitors, 'monitors');
    // Their sealed secrets, kept apart from the records as the cluster keeps them.
    for (const monitor of monitors) {
      const sealed = await stores.monitors.secrets(monitor._id);
      if (sealed !== null) await pool.query('INSERT INTO monitor_secrets (id, sealed) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [monitor._id, sealed]);
    }
    await copyDocs('monitor_checks', checks, 'monitor checks');
    // The accounts' storage destinations, their credentials sealed under the key copied below.
    for (const account of accounts) {
      const destination = await stores.destinations.get(account._id);
      if (destination) {
        await pool.query('INSERT INTO storage_destinations (account_id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (account_id) DO NOTHING', [
          destination._id,
          toJsonb(destination),
        ]);
      }
    }
    // The saved logins, their credentials and sessions sealed under the key copied below.
    for (const account of accounts) {
      for (const login of await stores.logins.list(account._id)) {
        const sealed = await stores.logins.secrets(login._id);
        await pool.query('INSERT INTO logins (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING', [login._id, toJsonb(login)]);
        if (sealed !== null) await pool.query('INSERT INTO login_secrets (id, sealed) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [login._id, sealed]);
      }
    }
    await inTransaction(pool, async (client) => {
      for (const day of usage) {
        await client.query(
          'INSERT INTO usage_days (account_id, day, month, count) VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, day) DO NOTHING',
          [day.account_id, day.day, day.day.slice(0, 7), day.count],
        );
      }
      for (const hour of hours) {
        await client.query('INSERT INTO hourly_ends (hour, completed, failed) VALUES ($1, $2, $3) ON CONFLICT (hour) DO NOTHING', [
          hour.hour,
          hour.completed,
          hour.failed,
        ]);
      }
      if (settings) await client.query('INSERT INTO settings (id, doc) VALUES (true, $1::jsonb) ON CONFLICT (id) DO NOTHING', [toJsonb(settings)]);
      // The values every node shares: the directory's own, unless the cluster has some already.
      const token = await fs.readFile(path.join(from, ADMIN_TOKEN_FILE), 'utf8').then((t) => t.trim(), () => null);
      if (token) await client.query('INSERT INTO shared_values (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [SHARED_ADMIN_TOKEN, token]);
      const key = await fs.readFile(path.join(from, SECRET_KEY_FILE)).catch(() => null);
      if (key?.length === 32) {
        const { rowCount } = await client.query('INSERT INTO shared_values (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
          SHARED_SECRET_KEY,
          key.toString('base64'),
        ]);
        if (!rowCount) progress(`the cluster already has a key sealing job secrets: secrets sealed in ${from} (job headers, cookies, render-link secrets) cannot be read there`);
      }
    });
    return { accounts: accounts.length, keys: keys.length, jobs: jobs.length, 'usage days': usage.length, 'webhook deliveries': deliveries.length, monitors: monitors.length, 'monitor checks': checks.length };
  } finally {
    await pool.end();
    await fs.rm(copy, { recursive: true, force: true });
    lock.release();
  }
}
