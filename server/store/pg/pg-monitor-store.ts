import type pg from 'pg';

import type { CheckRecord, MonitorRecord } from '../records/monitor-record.js';
import type { MonitorStore } from '../stores.js';
import { inTransaction, selectDoc, selectDocs, toJsonb } from './pg-pool.js';

/**
 * The first key of the transaction-scoped advisory lock an account's monitor insert takes; the
 * second is a hash of the account id. Accounts whose ids share a hash merely take turns.
 */
const MONITORS_LOCK = 0x4d4f_4e49; // 'MONI'

/**
 * The monitors and monitor_checks tables: each record in `doc`, its queried fields as generated
 * columns; a monitor's sealed secrets in monitor_secrets (removed with it by its foreign key).
 */
export class PgMonitorStore implements MonitorStore {
  constructor(private readonly pool: pg.Pool) {}

  /** One transaction holding the account's advisory lock: the nodes of a cluster count and insert an account's monitors in turns. */
  insert(monitor: MonitorRecord, secrets: string | null, max: number): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MONITORS_LOCK, monitor.account_id]);
      const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM monitors WHERE account_id = $1', [monitor.account_id]);
      if (rows[0].count >= max) return false;
      await client.query('INSERT INTO monitors (id, doc) VALUES ($1, $2::jsonb)', [monitor._id, toJsonb(monitor)]);
      if (secrets !== null) await client.query('INSERT INTO monitor_secrets (id, sealed) VALUES ($1, $2)', [monitor._id, secrets]);
      return true;
    });
  }

  get(id: string): Promise<MonitorRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM monitors WHERE id = $1', [id]);
  }

  list(accountId: string): Promise<MonitorRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM monitors WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  }

  update(id: string, change: Partial<Omit<MonitorRecord, '_id' | 'account_id'>>, secrets?: string | null): Promise<MonitorRecord | null> {
    const set = 'UPDATE monitors SET doc = doc || $2::jsonb WHERE id = $1 RETURNING doc';
    if (secrets === undefined) return selectDoc(this.pool, set, [id, toJsonb(change)]);
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ doc: MonitorRecord }>(set, [id, toJsonb(change)]);
      if (rows.length === 0) return null;
      if (secrets === null) await client.query('DELETE FROM monitor_secrets WHERE id = $1', [id]);
      else await client.query('INSERT INTO monitor_secrets (id, sealed) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET sealed = EXCLUDED.sealed', [id, secrets]);
      return rows[0].doc;
    });
  }

  async secrets(id: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ sealed: string }>('SELECT sealed FROM monitor_secrets WHERE id = $1', [id]);
    return rows[0]?.sealed ?? null;
  }

  async remove(id: string): Promise<CheckRecord[]> {
    const checks = await selectDocs<CheckRecord>(this.pool, 'DELETE FROM monitor_checks WHERE monitor_id = $1 RETURNING doc', [id]);
    await this.pool.query('DELETE FROM monitors WHERE id = $1', [id]);
    return checks;
  }

  due(now: number, limit: number): Promise<MonitorRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM monitors WHERE NOT paused AND next_run_at <= $1 ORDER BY next_run_at, id LIMIT $2', [now, limit]);
  }

  /** One conditional UPDATE of one row: of nodes claiming one occurrence at once, one changes it and the others find it changed. */
  async claim(id: string, expected: number, next: number): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE monitors SET doc = jsonb_set(doc, '{next_run_at}', to_jsonb($3::bigint)) WHERE id = $1 AND next_run_at = $2`,
      [id, expected, next],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async insertCheck(check: CheckRecord): Promise<void> {
    await this.pool.query('INSERT INTO monitor_checks (id, doc) VALUES ($1, $2::jsonb)', [check._id, toJsonb(check)]);
  }

  getCheck(id: string): Promise<CheckRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM monitor_checks WHERE id = $1', [id]);
  }

  updateCheck(id: string, status: CheckRecord['status'], change: Partial<Omit<CheckRecord, '_id' | 'monitor_id'>>): Promise<CheckRecord | null> {
    return selectDoc(this.pool, 'UPDATE monitor_checks SET doc = doc || $3::jsonb WHERE id = $1 AND status = $2 RETURNING doc', [id, status, toJsonb(change)]);
  }

  checks(monitorId: string, filter: { before?: { at: number; id: string }; limit: number }): Promise<CheckRecord[]> {
    return filter.before
      ? selectDocs(this.pool, 'SELECT doc FROM monitor_checks WHERE monitor_id = $1 AND (at, id) < ($2, $3) ORDER BY at DESC, id DESC LIMIT $4', [
          monitorId,
          filter.before.at,
          filter.before.id,
          filter.limit,
        ])
      : selectDocs(this.pool, 'SELECT doc FROM monitor_checks WHERE monitor_id = $1 ORDER BY at DESC, id DESC LIMIT $2', [monitorId, filter.limit]);
  }

  lastCompleted(monitorId: string, device: string, before: { at: number; id: string }): Promise<CheckRecord | null> {
    return selectDoc(
      this.pool,
      `SELECT doc FROM monitor_checks
        WHERE monitor_id = $1 AND status = 'completed' AND doc->>'device' = $4 AND (at, id) < ($2, $3)
        ORDER BY at DESC, id DESC LIMIT 1`,
      [monitorId, before.at, before.id, device],
    );
  }

  diffsBefore(cutoff: number, limit: number): Promise<CheckRecord[]> {
    return selectDocs(this.pool, `SELECT doc FROM monitor_checks WHERE at < $1 AND jsonb_typeof(doc->'diff_file') = 'string' ORDER BY at, id LIMIT $2`, [cutoff, limit]);
  }

  pendingChecks(limit: number): Promise<CheckRecord[]> {
    return selectDocs(this.pool, `SELECT doc FROM monitor_checks WHERE status = 'pending' ORDER BY at, id LIMIT $1`, [limit]);
  }

  removeChecksBefore(cutoff: number, limit: number): Promise<CheckRecord[]> {
    return selectDocs(
      this.pool,
      `DELETE FROM monitor_checks WHERE id IN (
         SELECT id FROM monitor_checks WHERE at < $1 AND status <> 'pending' ORDER BY at, id LIMIT $2
       ) RETURNING doc`,
      [cutoff, limit],
    );
  }
}
