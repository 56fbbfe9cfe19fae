import type pg from 'pg';

import type { Settings } from '../../contract/admin.js';
import type { SettingsStore } from '../stores.js';
import { selectDoc, toJsonb } from './pg-pool.js';

/** The settings table's one row: what the admin saved, replaced whole on each save. */
export class PgSettingsStore implements SettingsStore {
  constructor(private readonly pool: pg.Pool) {}

  load(): Promise<Partial<Settings> | null> {
    return selectDoc(this.pool, 'SELECT doc FROM settings');
  }

  async save(values: Partial<Settings>): Promise<void> {
    await this.pool.query('INSERT INTO settings (doc) VALUES ($1::jsonb) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc', [toJsonb(values)]);
  }
}
