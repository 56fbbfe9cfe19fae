import type pg from 'pg';

import type { KeyRecord } from '../records/key-record.js';
import type { KeyStore, NewKey } from '../stores.js';
import { selectDoc, selectDocs, toJsonb } from './pg-pool.js';
import { newRecordId } from './record-id.js';

/** The api_keys table: keys by their hash (a unique index) and by account. */
export class PgKeyStore implements KeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(key: NewKey): Promise<KeyRecord> {
    const record: KeyRecord = { ...key, _id: newRecordId() };
    const { rows } = await this.pool.query<{ doc: KeyRecord }>('INSERT INTO api_keys (id, doc) VALUES ($1, $2::jsonb) RETURNING doc', [
      record._id,
      toJsonb(record),
    ]);
    return rows[0].doc;
  }

  get(id: string): Promise<KeyRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM api_keys WHERE id = $1', [id]);
  }

  byHash(hash: string): Promise<KeyRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM api_keys WHERE hash = $1', [hash]);
  }

  byAccount(accountId: string): Promise<KeyRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  }

  async update(id: string, change: Partial<Omit<KeyRecord, '_id' | 'account_id' | 'hash'>>): Promise<void> {
    await this.pool.query('UPDATE api_keys SET doc = doc || $2::jsonb WHERE id = $1', [id, toJsonb(change)]);
  }

  async revokeAll(accountId: string): Promise<void> {
    await this.pool.query(`UPDATE api_keys SET doc = doc || '{"revoked": true}'::jsonb WHERE account_id = $1`, [accountId]);
  }

  async remove(id: string): Promise<void> {
    await this.pool.query('DELETE FROM api_keys WHERE id = $1', [id]);
  }
}
