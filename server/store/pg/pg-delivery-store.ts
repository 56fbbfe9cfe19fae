import type pg from 'pg';

import type { AttemptRecord, DeliveryDoc, DeliveryStatus } from '../../webhooks/delivery.js';
import type { DeliveryStore } from '../stores.js';
import { selectDoc, selectDocs, toJsonb } from './pg-pool.js';

/** The webhook_deliveries table: each delivery with its attempts in `doc`. */
export class PgDeliveryStore implements DeliveryStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(doc: DeliveryDoc): Promise<boolean> {
    const result = await this.pool.query('INSERT INTO webhook_deliveries (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING', [doc._id, toJsonb(doc)]);
    return (result.rowCount ?? 0) > 0;
  }

  get(id: string): Promise<DeliveryDoc | null> {
    return selectDoc(this.pool, 'SELECT doc FROM webhook_deliveries WHERE id = $1', [id]);
  }

  pending(): Promise<DeliveryDoc[]> {
    return selectDocs(this.pool, `SELECT doc FROM webhook_deliveries WHERE status = 'pending' ORDER BY created_at, id`);
  }

  list(filter: { job_id?: string; limit: number }): Promise<DeliveryDoc[]> {
    return filter.job_id === undefined
      ? selectDocs(this.pool, 'SELECT doc FROM webhook_deliveries ORDER BY created_at DESC, id DESC LIMIT $1', [filter.limit])
      : selectDocs(this.pool, 'SELECT doc FROM webhook_deliveries WHERE job_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [filter.job_id, filter.limit]);
  }

  /**
   * One UPDATE: two nodes recording attempts of one delivery each append theirs, neither is
   * lost. The attempt is over, so its reservation ends with it.
   */
  async recordAttempt(
    id: string,
    attempt: AttemptRecord,
    next: Pick<DeliveryDoc, 'status' | 'next_attempt_at' | 'completed_at' | 'scheduled_attempts'>,
  ): Promise<DeliveryDoc | null> {
    return selectDoc(
      this.pool,
      `UPDATE webhook_deliveries
          SET doc = jsonb_set(doc, '{attempts}', coalesce(doc->'attempts', '[]'::jsonb) || jsonb_build_array($2::jsonb)) || $3::jsonb
        WHERE id = $1
        RETURNING doc`,
      [id, toJsonb(attempt), toJsonb({ ...next, reserved_by: null, reserved_until: null })],
    );
  }

  async countByStatus(): Promise<Record<DeliveryStatus, number>> {
    const counts: Record<DeliveryStatus, number> = { pending: 0, succeeded: 0, failed: 0 };
    const { rows } = await this.pool.query<{ status: DeliveryStatus; n: number }>('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status');
    for (const { status, n } of rows) if (status in counts) counts[status] = n;
    return counts;
  }

  /** One UPDATE of one row: of nodes reserving a delivery at once, the first takes it and the others find it taken. */
  async reserve(id: string, node: string, now: number, until: number): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE webhook_deliveries SET doc = doc || jsonb_build_object('reserved_by', $2::text, 'reserved_until', $4::bigint)
        WHERE id = $1 AND status = 'pending'
          AND (doc->>'reserved_until' IS NULL OR (doc->>'reserved_until')::bigint < $3 OR doc->>'reserved_by' = $2)`,
      [id, node, now, until],
    );
    return (result.rowCount ?? 0) > 0;
  }

  due(now: number, limit: number): Promise<DeliveryDoc[]> {
    return selectDocs(
      this.pool,
      `SELECT doc FROM webhook_deliveries
        WHERE status = 'pending' AND (doc->>'next_attempt_at')::bigint <= $1
          AND (doc->>'reserved_until' IS NULL OR (doc->>'reserved_until')::bigint < $1)
        ORDER BY (doc->>'next_attempt_at')::bigint, id
        LIMIT $2`,
      [now, limit],
    );
  }

  async removeFinishedBefore(cutoff: number): Promise<number> {
    const result = await this.pool.query(`DELETE FROM webhook_deliveries WHERE created_at < $1 AND status <> 'pending'`, [cutoff]);
    return result.rowCount ?? 0;
  }
}
