import type pg from 'pg';

import type { Admission, UsageDay, UsageStore } from '../stores.js';
import { inTransaction } from './pg-pool.js';

/**
 * The first key of the transaction-scoped advisory lock an admission takes; the second is a
 * hash of the account id. Accounts whose ids share a hash merely take turns.
 */
const ADMISSION_LOCK = 0x5553_4147; // 'USAG'

const UPSERT = `
  INSERT INTO usage_days (account_id, day, month, count) VALUES ($1, $2, $3, $4)
  ON CONFLICT (account_id, day) DO UPDATE SET count = usage_days.count + excluded.count, month = excluded.month`;

/** The usage_days table: calls per account and UTC day. */
export class PgUsageStore implements UsageStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * One transaction holding the account's advisory lock: the admissions of every node of a
   * cluster take turns per account, each reading the sums the one before it wrote, so a burst
   * at the limit admits exactly the limit.
   */
  admit(accountId: string, at: { day: string; month: string }, calls: number, limits: { daily: number; monthly: number }): Promise<Admission> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADMISSION_LOCK, accountId]);
      const { rows } = await client.query<{ today: number; month: number }>(
        `SELECT coalesce(sum(count) FILTER (WHERE day = $2), 0)::bigint AS today, coalesce(sum(count), 0)::bigint AS month
           FROM usage_days WHERE account_id = $1 AND month = $3`,
        [accountId, at.day, at.month],
      );
      const { today, month } = rows[0];
      const admitted = today + calls <= limits.daily && month + calls <= limits.monthly;
      if (admitted) await client.query(UPSERT, [accountId, at.day, at.month, calls]);
      return { admitted, today, month };
    });
  }

  async add(accountId: string, at: { day: string; month: string }, calls: number): Promise<void> {
    await this.pool.query(UPSERT, [accountId, at.day, at.month, calls]);
  }

  async month(accountId: string, month: string): Promise<UsageDay[]> {
    const { rows } = await this.pool.query<UsageDay>(
      'SELECT account_id, day, count FROM usage_days WHERE account_id = $1 AND month = $2 ORDER BY day',
      [accountId, month],
    );
    return rows;
  }

  async since(accountId: string | undefined, fromDay: string): Promise<UsageDay[]> {
    const { rows } =
      accountId === undefined
        ? await this.pool.query<UsageDay>('SELECT account_id, day, count FROM usage_days WHERE day >= $1 ORDER BY day, account_id', [fromDay])
        : await this.pool.query<UsageDay>('SELECT account_id, day, count FROM usage_days WHERE account_id = $1 AND day >= $2 ORDER BY day', [
            accountId,
            fromDay,
          ]);
    return rows;
  }
}
