import type pg from 'pg';

import type { BatchRecord } from '../records/batch-record.js';
import type { BatchStore } from '../stores.js';
import { inTransaction, selectDoc, selectDocs, toJsonb } from './pg-pool.js';

/** The batches table, and batch_items (their sealed items, written once, deleted at the batch's end). */
export class PgBatchStore implements BatchStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(batch: BatchRecord, sealedItems: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO batch_items (id, sealed) VALUES ($1, $2)', [batch._id, sealedItems]);
      await client.query('INSERT INTO batches (id, doc) VALUES ($1, $2::jsonb)', [batch._id, toJsonb(batch)]);
    });
  }

  get(id: string): Promise<BatchRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM batches WHERE id = $1', [id]);
  }

  async items(id: string): Promise<string | null> {
    return (await this.pool.query<{ sealed: string }>('SELECT sealed FROM batch_items WHERE id = $1', [id])).rows[0]?.sealed ?? null;
  }

  /** One statement: two nodes feeding or counting at once each see the other's change. */
  addJobs(id: string, jobIds: readonly string[]): Promise<BatchRecord | null> {
    return selectDoc(
      this.pool,
      `UPDATE batches SET doc = jsonb_set(doc, '{jobs}', (doc->'jobs') || $2::jsonb) WHERE id = $1 RETURNING doc`,
      [id, JSON.stringify(jobIds)],
    );
  }

  countEnd(id: string, status: 'completed' | 'failed'): Promise<BatchRecord | null> {
    return selectDoc(
      this.pool,
      `UPDATE batches SET doc = jsonb_set(doc, ARRAY[$2::text], to_jsonb((doc->>$2)::int + 1)) WHERE id = $1 RETURNING doc`,
      [id, status],
    );
  }

  end(id: string, status: 'completed' | 'cancelled', at: number): Promise<BatchRecord | null> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ doc: BatchRecord }>(
        `UPDATE batches SET doc = doc || jsonb_build_object('status', $2::text, 'ended_at', $3::bigint)
         WHERE id = $1 AND status = 'running' RETURNING doc`,
        [id, status, at],
      );
      if (rows.length === 0) return null;
      await client.query('DELETE FROM batch_items WHERE id = $1', [id]);
      return rows[0].doc;
    });
  }

  running(): Promise<BatchRecord[]> {
    return selectDocs(this.pool, `SELECT doc FROM batches WHERE status = 'running' ORDER BY created_at, id`);
  }

  recent(limit: number): Promise<BatchRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM batches ORDER BY created_at DESC, id DESC LIMIT $1', [limit]);
  }

  async removeEndedBefore(cutoff: number): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM batches WHERE status <> 'running' AND (doc->>'ended_at')::bigint < $1`, [cutoff]);
    return rowCount ?? 0;
  }
}
