import type { Settings } from '../../contract/admin.js';
import { SerialByKey } from '../../serial-by-key.js';
import type { SettingsStore, SharedValues } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

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

/** Shared values in settings.db, one document each (`shared:<name>`); one node uses them, but the interface is the cluster's. */
export class NedbSharedValues implements SharedValues {
  /** Two calls for one name take turns, so both get the value the first stored. */
  private readonly turns = new SerialByKey();

  constructor(private readonly db: NedbFile<SettingsDoc>) {}

  getOrSet(name: string, value: string): Promise<string> {
    return this.turns.run(name, () => this.getOrSetNow(name, value));
  }

  private async getOrSetNow(name: string, value: string): Promise<string> {
    const id = `shared:${name}`;
    const found = (await this.db.findOne({ _id: id })) as { value?: string } | null;
    if (typeof found?.value === 'string') return found.value;
    await this.db.update({ _id: id }, { _id: id, value } as SettingsDoc, { upsert: true });
    return value;
  }
}
