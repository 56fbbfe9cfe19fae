import type pg from 'pg';

import type { DestinationRecord } from '../records/destination-record.js';
import type { DestinationStore } from '../stores.js';
import { selectDoc, toJsonb } from './pg-pool.js';

/** The storage_destinations table: one row per account with a destination, its credentials sealed in the document. */
export class PgDestinationStore implements DestinationStore {
  constructor(private readonly pool: pg.Pool) {}

  get(accountId: string): Promise<DestinationRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM storage_destinations WHERE account_id = $1', [accountId]);
  }

  async put(record: DestinationRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO storage_destinations (account_id, doc) VALUES ($1, $2::jsonb)
       ON CONFLICT (account_id) DO UPDATE SET doc = EXCLUDED.doc`,
      [record._id, toJsonb(record)],
    );
  }

  async remove(accountId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM storage_destinations WHERE account_id = $1', [accountId]);
    return (rowCount ?? 0) > 0;
  }
}
