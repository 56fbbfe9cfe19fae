import { SerialByKey } from '../../serial-by-key.js';
import type { LoginRecord } from '../records/login-record.js';
import type { LoginStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';
import { SealedFiles } from './sealed-files.js';

/** The folder of the data directory holding the sealed secrets of logins; never archived by `backup`. */
export const LOGIN_SECRETS_DIR = 'login-secrets';

/** logins.db: the saved logins; each one's sealed user name, password and session in its own file, never in a line of logins.db. */
export class NedbLoginStore implements LoginStore {
  /** Changes of one login's secrets take turns. */
  private readonly turns = new SerialByKey();

  private constructor(
    private readonly logins: NedbFile<LoginRecord>,
    private readonly secretFiles: SealedFiles,
  ) {}

  static async open(logins: NedbFile<LoginRecord>, dataDir: string): Promise<NedbLoginStore> {
    await logins.ensureIndex({ fieldName: 'account_id' });
    const secretFiles = await SealedFiles.open(dataDir, LOGIN_SECRETS_DIR, 'login');
    await secretFiles.sweep(async (id) => (await logins.count({ _id: id })) > 0);
    return new NedbLoginStore(logins, secretFiles);
  }

  async insert(login: LoginRecord, secrets: string): Promise<void> {
    await this.secretFiles.put(login._id, secrets);
    try {
      await this.logins.insert(login);
    } catch (err) {
      await this.secretFiles.remove(login._id).catch(() => undefined);
      throw err;
    }
  }

  get(id: string): Promise<LoginRecord | null> {
    return this.logins.findOne({ _id: id });
  }

  list(accountId: string): Promise<LoginRecord[]> {
    return this.logins.find({ account_id: accountId }).sort({ created_at: 1, _id: 1 });
  }

  update(id: string, change: Partial<Omit<LoginRecord, '_id' | 'account_id'>>, secrets?: string): Promise<LoginRecord | null> {
    return this.turns.run(id, async () => {
      if (!(await this.logins.findOne({ _id: id }))) return null;
      if (secrets !== undefined) await this.secretFiles.put(id, secrets);
      return (await this.logins.update({ _id: id }, { $set: change }, { returnUpdatedDocs: true })) ?? null;
    });
  }

  claimSignIn(id: string, sessionVersion: number, claim: { by: string; until: number }, now: number): Promise<boolean> {
    return this.turns.run(id, async () => {
      const free = { $or: [{ signing_in: { $exists: false } }, { signing_in: null }, { 'signing_in.until': { $lt: now } }, { 'signing_in.by': claim.by }] };
      return (await this.logins.update({ _id: id, session_version: sessionVersion, state: { $ne: 'failed' }, ...free }, { $set: { signing_in: claim } }, {})) > 0;
    });
  }

  secrets(id: string): Promise<string | null> {
    return this.secretFiles.get(id);
  }

  remove(id: string): Promise<boolean> {
    return this.turns.run(id, async () => {
      const removed = (await this.logins.remove({ _id: id }, {})) > 0;
      await this.secretFiles.remove(id);
      return removed;
    });
  }
}
