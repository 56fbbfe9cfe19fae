import type { Logger } from '../../logger.js';
import type { AccountRecord } from '../records/account-record.js';
import { type AccountStore, EmailTakenError, type NewAccount } from '../stores.js';
import type { NedbFile } from './nedb-file.js';
import { uniqueIndexOrPlain } from './nedb-unique-index.js';

/** accounts.db. */
export class NedbAccountStore implements AccountStore {
  private constructor(private readonly db: NedbFile<AccountRecord>) {}

  static async open(db: NedbFile<AccountRecord>, log: Logger): Promise<NedbAccountStore> {
    // An accounts.db from before the index may hold one address twice (two requests at once).
    await uniqueIndexOrPlain(db, 'email', async () =>
      log.warn('accounts.db holds an e-mail address shared by several accounts; new accounts are still checked against it'),
    );
    return new NedbAccountStore(db);
  }

  insert(account: NewAccount): Promise<AccountRecord> {
    return this.db.insert(account as AccountRecord).catch(emailTaken);
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
    await this.db.update({ _id: id }, { $set: change }).catch(emailTaken);
  }

  async remove(id: string): Promise<void> {
    await this.db.remove({ _id: id }, {});
  }
}

/** NeDB's unique index refused the write. */
function emailTaken(err: unknown): never {
  if ((err as { errorType?: string }).errorType === 'uniqueViolated') throw new EmailTakenError('another account has this e-mail address');
  throw err;
}
