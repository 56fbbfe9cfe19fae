import type pg from 'pg';

import type { AccountRecord } from '../records/account-record.js';
import { type AccountStore, EmailTakenError, type NewAccount } from '../stores.js';
import { selectDoc, selectDocs, toJsonb } from './pg-pool.js';
import { newRecordId } from './record-id.js';

/** The accounts table. */
export class PgAccountStore implements AccountStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(account: NewAccount): Promise<AccountRecord> {
    const record: AccountRecord = { ...account, _id: newRecordId() };
    const { rows } = await this.pool
      .query<{ doc: AccountRecord }>('INSERT INTO accounts (id, doc) VALUES ($1, $2::jsonb) RETURNING doc', [record._id, toJsonb(record)])
      .catch(emailTaken);
    return rows[0].doc;
  }

  list(): Promise<AccountRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM accounts ORDER BY created_at, id');
  }

  get(id: string): Promise<AccountRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM accounts WHERE id = $1', [id]);
  }

  byEmail(email: string): Promise<AccountRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM accounts WHERE email = $1 ORDER BY created_at, id LIMIT 1', [email]);
  }

  async update(id: string, change: Partial<Omit<AccountRecord, '_id'>>): Promise<void> {
    await this.pool.query('UPDATE accounts SET doc = doc || $2::jsonb WHERE id = $1', [id, toJsonb(change)]).catch(emailTaken);
  }

  async remove(id: string): Promise<void> {
    await this.pool.query('DELETE FROM accounts WHERE id = $1', [id]);
  }
}

/** The unique e-mail index refused the write (SQLSTATE 23505, unique_violation). */
function emailTaken(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw new EmailTakenError('another account has this e-mail address');
  throw err;
}
