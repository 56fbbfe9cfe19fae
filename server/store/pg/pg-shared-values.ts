import type pg from 'pg';

import type { SharedValues } from '../stores.js';

/** The shared_values table: one value per name, set by the first node that asks. */
export class PgSharedValues implements SharedValues {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Two statements, not one: when another node's insert wins the race, ON CONFLICT waits for
   * it to commit, and only a statement begun after that sees its value.
   */
  async getOrSet(name: string, value: string): Promise<string> {
    await this.pool.query('INSERT INTO shared_values (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, value]);
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM shared_values WHERE name = $1', [name]);
    return rows[0].value;
  }
}
