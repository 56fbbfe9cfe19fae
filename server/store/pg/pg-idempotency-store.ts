import type pg from 'pg';

import type { IdempotencyRecord, KeptAnswer } from '../records/idempotency-record.js';
import type { IdempotencyStore } from '../stores.js';
import { selectDoc, toJsonb } from './pg-pool.js';

/** The idempotency_keys table: one row per Idempotency-Key of an account, shared by the nodes of a cluster. */
export class PgIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * One statement claims: a new key is inserted, and an expired one replaced, in one step, so of
   * two nodes claiming at once one inserts and the other waits for it and finds a live entry.
   */
  async claim(record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | null> {
    // The live entry can vanish between the two statements (its request failed and gave it up): try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rowCount } = await this.pool.query(
        `INSERT INTO idempotency_keys (id, doc) VALUES ($1, $2::jsonb)
         ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc WHERE idempotency_keys.until <= $3`,
        [record._id, toJsonb(record), now],
      );
      if ((rowCount ?? 0) > 0) return null;
      const live = await selectDoc<IdempotencyRecord>(this.pool, 'SELECT doc FROM idempotency_keys WHERE id = $1 AND until > $2', [record._id, now]);
      if (live) return live;
    }
    throw new Error(`the Idempotency-Key entry ${record._id} kept changing while it was claimed`);
  }

  async answer(id: string, claim: string, answer: KeptAnswer, until: number): Promise<void> {
    await this.pool.query(
      `UPDATE idempotency_keys SET doc = doc || jsonb_build_object('answer', $3::jsonb, 'until', $4::bigint)
       WHERE id = $1 AND doc->>'claim' = $2`,
      [id, claim, toJsonb(answer), until],
    );
  }

  async release(id: string, claim: string): Promise<void> {
    await this.pool.query(`DELETE FROM idempotency_keys WHERE id = $1 AND doc->>'claim' = $2`, [id, claim]);
  }

  async removeExpired(now: number): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM idempotency_keys WHERE until <= $1', [now]);
    return rowCount ?? 0;
  }
}
