import { SerialByKey } from '../../serial-by-key.js';
import type { BatchRecord } from '../records/batch-record.js';
import type { BatchStore } from '../stores.js';
import { compactFile, type NedbFile } from './nedb-file.js';

/** The datafile of the batches' sealed items, never archived by `backup` (a backup holds no secret). */
export const BATCH_ITEMS_FILE = 'batch-items.db';

/** A batch's sealed items in batch-items.db: written once, removed when the batch ends. */
export interface BatchItemsDoc {
  _id: string;
  sealed: string;
}

/**
 * batches.db, one document per batch, and batch-items.db, its sealed items apart: the record is
 * appended again at each change, the items only once.
 */
export class NedbBatchStore implements BatchStore {
  /** Each change reads, then writes: one batch's changes take turns. */
  private readonly turns = new SerialByKey();

  private constructor(
    private readonly db: NedbFile<BatchRecord>,
    private readonly itemsDb: NedbFile<BatchItemsDoc>,
  ) {}

  static async open(db: NedbFile<BatchRecord>, itemsDb: NedbFile<BatchItemsDoc>): Promise<NedbBatchStore> {
    await db.ensureIndex({ fieldName: 'status' });
    await db.ensureIndex({ fieldName: 'created_at' });
    return new NedbBatchStore(db, itemsDb);
  }

  async insert(batch: BatchRecord, sealedItems: string): Promise<void> {
    // The items first: a batch never runs without them.
    await this.itemsDb.insert({ _id: batch._id, sealed: sealedItems });
    await this.db.insert(batch);
  }

  get(id: string): Promise<BatchRecord | null> {
    return this.db.findOne({ _id: id });
  }

  async items(id: string): Promise<string | null> {
    return (await this.itemsDb.findOne({ _id: id }))?.sealed ?? null;
  }

  addJobs(id: string, jobIds: readonly string[]): Promise<BatchRecord | null> {
    return this.change(id, { $push: { jobs: { $each: [...jobIds] } } });
  }

  countEnd(id: string, status: 'completed' | 'failed'): Promise<BatchRecord | null> {
    return this.change(id, { $inc: { [status]: 1 } });
  }

  end(id: string, status: 'completed' | 'cancelled', at: number): Promise<BatchRecord | null> {
    return this.turns.run(id, async () => {
      const ended = await this.db.update({ _id: id, status: 'running' }, { $set: { status, ended_at: at } }, { returnUpdatedDocs: true });
      if (!ended) return null;
      await this.itemsDb.remove({ _id: id }, {});
      // NeDB appends: folded at once, the removed items (secrets among them) leave no line behind.
      await compactFile(this.itemsDb as unknown as NedbFile<{ _id: string }>);
      return ended as unknown as BatchRecord;
    });
  }

  running(): Promise<BatchRecord[]> {
    return this.db.find({ status: 'running' }).sort({ created_at: 1, _id: 1 });
  }

  recent(limit: number): Promise<BatchRecord[]> {
    return this.db.find({}).sort({ created_at: -1, _id: -1 }).limit(limit);
  }

  removeEndedBefore(cutoff: number): Promise<number> {
    return this.db.remove({ status: { $ne: 'running' }, ended_at: { $lt: cutoff } }, { multi: true });
  }

  private change(id: string, update: Record<string, unknown>): Promise<BatchRecord | null> {
    return this.turns.run(id, async () => {
      const changed = await this.db.update({ _id: id }, update, { returnUpdatedDocs: true });
      return (changed as unknown as BatchRecord | null) ?? null;
    });
  }
}
