import type pg from 'pg';

import type { LoginRecord } from '../records/login-record.js';
import type { LoginStore } from '../stores.js';
import { inTransaction, selectDoc, selectDocs, toJsonb } from './pg-pool.js';

/** The logins table (each record in `doc`); a login's sealed secrets in login_secrets, removed with it by its foreign key. */
export class PgLoginStore implements LoginStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(login: LoginRecord, secrets: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO logins (id, doc) VALUES ($1, $2::jsonb)', [login._id, toJsonb(login)]);
      await client.query('INSERT INTO login_secrets (id, sealed) VALUES ($1, $2)', [login._id, secrets]);
    });
  }

  get(id: string): Promise<LoginRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM logins WHERE id = $1', [id]);
  }

  list(accountId: string): Promise<LoginRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM logins WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  }

  update(id: string, change: Partial<Omit<LoginRecord, '_id' | 'account_id'>>, secrets?: string): Promise<LoginRecord | null> {
    const set = 'UPDATE logins SET doc = doc || $2::jsonb WHERE id = $1 RETURNING doc';
    if (secrets === undefined) return selectDoc(this.pool, set, [id, toJsonb(change)]);
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ doc: LoginRecord }>(set, [id, toJsonb(change)]);
      if (rows.length === 0) return null;
      await client.query('INSERT INTO login_secrets (id, sealed) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET sealed = EXCLUDED.sealed', [id, secrets]);
      return rows[0].doc;
    });
  }

  async claimSignIn(id: string, sessionVersion: number, claim: { by: string; until: number }, now: number): Promise<boolean> {
    // One statement: a node updating the row meanwhile makes this one read it again (READ COMMITTED), so two never both take it.
    const { rowCount } = await this.pool.query(
      `UPDATE logins SET doc = doc || jsonb_build_object('signing_in', $2::jsonb)
        WHERE id = $1 AND (doc->>'session_version')::bigint = $3 AND doc->>'state' <> 'failed'
          AND (jsonb_typeof(doc->'signing_in') IS DISTINCT FROM 'object' OR (doc->'signing_in'->>'until')::bigint < $4 OR doc->'signing_in'->>'by' = $5)`,
      [id, toJsonb(claim), sessionVersion, now, claim.by],
    );
    return (rowCount ?? 0) > 0;
  }

  async secrets(id: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ sealed: string }>('SELECT sealed FROM login_secrets WHERE id = $1', [id]);
    return rows[0]?.sealed ?? null;
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM logins WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  }
}
