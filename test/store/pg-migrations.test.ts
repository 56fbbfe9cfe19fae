import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { lineLogger, silentLogger } from '../../server/logger.js';
import { migrate, MIGRATIONS, runMigrations } from '../../server/store/pg/migrations.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const LATEST = MIGRATIONS.map((m) => m.version);

let server: TestPostgres;
const pools: pg.Pool[] = [];
const poolFor = (url: string) => {
  const pool = createPool(url, silentLogger);
  pools.push(pool);
  return pool;
};
const versions = async (pool: pg.Pool) => (await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
const tableExists = async (pool: pg.Pool, name: string) => (await pool.query('SELECT to_regclass($1) AS t', [name])).rows[0].t !== null;

beforeAll(async () => {
  server = await startPostgres();
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});
afterAll(async () => {
  await server?.stop();
});

describe('the PostgreSQL schema migrations', () => {
  it('apply every step to a fresh database, and nothing when run again', async () => {
    const pool = poolFor(await server.createDatabase());
    const lines: string[] = [];
    expect(await migrate(pool, lineLogger((line) => lines.push(line)))).toEqual(LATEST);
    expect(lines.join('\n')).toContain('applied schema migration 1 (stores)');
    expect(await migrate(pool, silentLogger)).toEqual([]);
    expect(await versions(pool)).toEqual(LATEST);
    for (const table of ['jobs', 'accounts', 'api_keys', 'usage_days', 'hourly_ends', 'settings', 'webhook_deliveries']) {
      expect(await tableExists(pool, table)).toBe(true);
    }
  });

  it('apply each step once when three nodes start on a fresh database at once', async () => {
    const url = await server.createDatabase();
    const nodes = [poolFor(url), poolFor(url), poolFor(url)];
    const applied = await Promise.all(nodes.map((pool) => migrate(pool, silentLogger)));
    expect(applied.flat().sort((a, b) => a - b)).toEqual(LATEST);
    expect(applied.filter((versions) => versions.length > 0)).toHaveLength(1);
    expect(await versions(nodes[0])).toEqual(LATEST);
  });

  it('apply only the steps a database has not had', async () => {
    const pool = poolFor(await server.createDatabase());
    await migrate(pool, silentLogger);
    const later = [...MIGRATIONS, { version: 1_000, name: 'later', sql: 'CREATE TABLE later (id int PRIMARY KEY)' }];
    expect(await migrate(pool, silentLogger, later)).toEqual([1_000]);
    expect(await migrate(pool, silentLogger, later)).toEqual([]);
    expect(await tableExists(pool, 'later')).toBe(true);
  });

  it('roll a failing step back whole, keep the steps before it, and let the next start retry it', async () => {
    const pool = poolFor(await server.createDatabase());
    const failing = [...MIGRATIONS, { version: 1_000, name: 'broken', sql: 'CREATE TABLE half (id int); SELECT 1 / 0' }];
    await expect(migrate(pool, silentLogger, failing)).rejects.toThrow(/schema migration 1000 \(broken\) failed: division by zero/);
    expect(await versions(pool)).toEqual(LATEST);
    expect(await tableExists(pool, 'half')).toBe(false);
    // The failed run let go of the lock: another node is not left waiting for it.
    const fixed = [...MIGRATIONS, { version: 1_000, name: 'fixed', sql: 'CREATE TABLE half (id int)' }];
    expect(await migrate(poolFor(pool.options.connectionString!), silentLogger, fixed)).toEqual([1_000]);
  });

  it('refuse steps listed out of order before touching the database', async () => {
    const pool = poolFor(await server.createDatabase());
    const shuffled = [{ version: 2, name: 'b', sql: 'SELECT 1' }, { version: 1, name: 'a', sql: 'SELECT 1' }];
    await expect(migrate(pool, silentLogger, shuffled)).rejects.toThrow(/migration 1 is listed after 2/);
    expect(await tableExists(pool, 'schema_migrations')).toBe(false);
  });

  it('warn of versions a newer node applied and this one does not know', async () => {
    const pool = poolFor(await server.createDatabase());
    await migrate(pool, silentLogger, [...MIGRATIONS, { version: 1_000, name: 'newer', sql: 'SELECT 1' }]);
    const lines: string[] = [];
    expect(await migrate(pool, lineLogger((line) => lines.push(line)))).toEqual([]);
    expect(lines.join('\n')).toMatch(/schema versions this node does not know \(1000\)/);
  });

  it('run by hand from a database URL (screenshot-appliance migrate)', async () => {
    const url = await server.createDatabase();
    expect(await runMigrations(url, silentLogger)).toEqual(LATEST);
    expect(await runMigrations(url, silentLogger)).toEqual([]);
  });
});
