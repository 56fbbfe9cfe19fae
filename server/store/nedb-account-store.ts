import type { AccountRecord } from '../auth/accounts.js';
import type { NedbFile } from './nedb-stores.js';
import type { AccountStore, NewAccount } from './stores.js';

/** accounts.db. */
export class NedbAccountStore implements AccountStore {
  private constructor(private readonly db: NedbFile<AccountRecord>) {}

  static async open(db: NedbFile<AccountRecord>): Promise<NedbAccountStore> {
    await db.ensureIndex({ fieldName: 'email' });
    return new NedbAccountStore(db);
  }

  insert(account: NewAccount): Promise<AccountRecord> {
    return this.db.insert(account as AccountRecord);
  }

  list(): Promise<AccountRecord[]> {
    return this.db.find({}).sort({ created_at: 1 });
  }

  get(id: string): Promise<AccountRecord | null> {
    return this.db.findOne({ _id: id });
  }

  byEmail(email: string): Promise<AccountRecord | null> {
    return this.db.findOne({ email });
  }

  async update(id: string, change: Partial<Omit<AccountRecord, '_id'>>): Promise<void> {
    await this.db.update({ _id: id }, { $set: change });
  }

  async remove(id: string): Promise<void> {
    await this.db.remove({ _id: id }, {});
  }
}
