import { SerialByKey } from '../../serial-by-key.js';
import type { IdempotencyRecord, KeptAnswer } from '../records/idempotency-record.js';
import type { IdempotencyStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/**
 * idempotency.db: one document per Idempotency-Key of an account. A claim and its answer are two
 * lines; entries expire after a day and are removed then, and the file is folded with the others.
 */
export class NedbIdempotencyStore implements IdempotencyStore {
  /** A claim reads, then writes: two claims of one key take turns, so exactly one stores. */
  private readonly turns = new SerialByKey();

  private constructor(private readonly db: NedbFile<IdempotencyRecord>) {}

  static async open(db: NedbFile<IdempotencyRecord>): Promise<NedbIdempotencyStore> {
    await db.ensureIndex({ fieldName: 'until' });
    return new NedbIdempotencyStore(db);
  }

  claim(record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | null> {
    return this.turns.run(record._id, async () => {
      const live = await this.db.findOne({ _id: record._id, until: { $gt: now } });
      if (live) return live;
      await this.db.update({ _id: record._id }, record, { upsert: true });
      return null;
    });
  }

  async answer(id: string, claim: string, answer: KeptAnswer, until: number): Promise<void> {
    await this.turns.run(id, () => this.db.update({ _id: id, claim }, { $set: { answer, until } }));
  }

  async release(id: string, claim: string): Promise<void> {
    await this.turns.run(id, () => this.db.remove({ _id: id, claim }, {}));
  }

  removeExpired(now: number): Promise<number> {
    return this.db.remove({ until: { $lte: now } }, { multi: true });
  }
}
