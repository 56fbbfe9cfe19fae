import type { Logger } from '../../logger.js';
import type { KeyRecord } from '../records/key-record.js';
import type { KeyStore, NewKey } from '../stores.js';
import type { NedbFile } from './nedb-file.js';
import { uniqueIndexOrPlain } from './nedb-unique-index.js';

/** keys.db: API keys by their hash (unique) and by account. */
export class NedbKeyStore implements KeyStore {
  private constructor(private readonly db: NedbFile<KeyRecord>) {}

  static async open(db: NedbFile<KeyRecord>, log: Logger): Promise<NedbKeyStore> {
    await Promise.all([uniqueIndexOrPlain(db, 'hash', () => reportSharedHashes(db, log)), db.ensureIndex({ fieldName: 'account_id' })]);
    return new NedbKeyStore(db);
  }

  insert(key: NewKey): Promise<KeyRecord> {
    return this.db.insert(key as KeyRecord);
  }

  get(id: string): Promise<KeyRecord | null> {
    return this.db.findOne({ _id: id });
  }

  byHash(hash: string): Promise<KeyRecord[]> {
    return this.db.find({ hash });
  }

  byAccount(accountId: string): Promise<KeyRecord[]> {
    return this.db.find({ account_id: accountId }).sort({ created_at: 1 });
  }

  async update(id: string, change: Partial<Omit<KeyRecord, '_id' | 'account_id' | 'hash'>>): Promise<void> {
    await this.db.update({ _id: id }, { $set: change });
  }

  async revokeAll(accountId: string): Promise<void> {
    await this.db.update({ account_id: accountId }, { $set: { revoked: true } }, { multi: true });
  }

  async remove(id: string): Promise<void> {
    await this.db.remove({ _id: id }, {});
  }
}

/**
 * Key hashes are unique. A keys.db edited by hand or restored from two backups can still hold
 * two records with one hash; that must not keep the server from starting. The index is then a
 * plain one, the records are named here, and ApiKeyService refuses every key whose hash is not unique.
 */
async function reportSharedHashes(keys: NedbFile<KeyRecord>, log: Logger): Promise<void> {
  const records = await keys.find({});
  const byHash = new Map<string, string[]>();
  for (const r of records) byHash.set(r.hash, [...(byHash.get(r.hash) ?? []), r._id]);
  const shared = [...byHash.values()].filter((ids) => ids.length > 1);
  log.warn(`keys.db holds ${shared.length} key hash(es) shared by several records (${shared.map((ids) => ids.join(' = ')).join('; ')}); those keys are refused until the duplicates are removed`);
}
