import type { Settings } from '../api/schemas/admin.js';
import type { NedbFile } from './nedb-stores.js';
import type { SettingsStore } from './stores.js';

/** The one document of settings.db: what the admin saved. */
export type SettingsDoc = Partial<Settings> & { _id: string };

const ID = 'settings';

/** settings.db. */
export class NedbSettingsStore implements SettingsStore {
  constructor(private readonly db: NedbFile<SettingsDoc>) {}

  async load(): Promise<Partial<Settings> | null> {
    const doc = await this.db.findOne({ _id: ID });
    if (!doc) return null;
    const { _id, ...values } = doc;
    return values;
  }

  async save(values: Partial<Settings>): Promise<void> {
    await this.db.update({ _id: ID }, { _id: ID, ...values }, { upsert: true });
  }
}
