import type pg from 'pg';

import type { JobSecretStore } from '../stores.js';
import { toJsonb } from './pg-pool.js';

/** A secret whose job is not in the jobs table this long after it was stored belongs to an insert that failed. */
const ORPHAN_AFTER_MS = 3_600_000;

/**
 * The job_secrets table: one row per job that has not ended, deleted when it ends. The jobs
 * table, whose rows are updated in place and keep dead versions until vacuumed, never holds
 * them; after each round of deletes the table is vacuumed (a small table: milliseconds), so
 * the deleted rows' space is reclaimed rather than left to autovacuum.
 */
export class PgJobSecretStore implements JobSecretStore {
  private vacuuming: Promise<void> | undefined;
  private vacuumAgain: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  async put(entries: ReadonlyArray<{ id: string; sealed: string }>): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `INSERT INTO job_secrets (id, sealed, created_at)
       SELECT e->>'id', e->>'sealed', $2::bigint FROM jsonb_array_elements($1::jsonb) AS e
       ON CONFLICT (id) DO UPDATE SET sealed = EXCLUDED.sealed`,
      [toJsonb(entries), Date.now()],
    );
  }

  async get(id: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ sealed: string }>('SELECT sealed FROM job_secrets WHERE id = $1', [id]);
    return rows[0]?.sealed ?? null;
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const { rowCount } = await this.pool.query('DELETE FROM job_secrets WHERE id = ANY($1::text[])', [ids]);
    if (rowCount) await this.vacuum();
  }

  async sweep(): Promise<number> {
    // Rows of ended or removed jobs; a row whose job is not there yet may be another node's insert under way.
    const { rowCount } = await this.pool.query(
      `DELETE FROM job_secrets s
        WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.id AND j.status IN ('pending', 'processing'))
          AND (EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.id) OR s.created_at < $1)`,
      [Date.now() - ORPHAN_AFTER_MS],
    );
    if (rowCount) await this.vacuum();
    return rowCount ?? 0;
  }

  /** One VACUUM at a time; deletes made while one runs are covered by the next, shared by all of them. */
  private vacuum(): Promise<void> {
    if (!this.vacuuming) {
      this.vacuuming = this.pool
        .query('VACUUM job_secrets')
        .then(() => undefined)
        .finally(() => {
          this.vacuuming = undefined;
        });
      return this.vacuuming;
    }
    this.vacuumAgain ??= this.vacuuming
      .catch(() => undefined)
      .then(() => {
        this.vacuumAgain = undefined;
        return this.vacuum();
      });
    return this.vacuumAgain;
  }
}
