import type pg from 'pg';

import type { EndStatus } from '../records/job-record.js';
import type { HourlyEnds, StatsStore } from '../stores.js';

/** The hourly_ends table: job ends per UTC hour, counted as jobs end. */
export class PgStatsStore implements StatsStore {
  constructor(private readonly pool: pg.Pool) {}

  async countEnd(hour: number, status: EndStatus): Promise<void> {
    // The column is chosen here, from the two the type allows, never from text a caller gives.
    const column = status === 'completed' ? 'completed' : 'failed';
    await this.pool.query(
      `INSERT INTO hourly_ends (hour, ${column}) VALUES ($1, 1)
       ON CONFLICT (hour) DO UPDATE SET ${column} = hourly_ends.${column} + 1`,
      [hour],
    );
  }

  async hoursSince(fromHour: number): Promise<HourlyEnds[]> {
    const { rows } = await this.pool.query<HourlyEnds>('SELECT hour, completed, failed FROM hourly_ends WHERE hour >= $1 ORDER BY hour', [fromHour]);
    return rows;
  }

  async prune(beforeHour: number): Promise<void> {
    await this.pool.query('DELETE FROM hourly_ends WHERE hour < $1', [beforeHour]);
  }
}
