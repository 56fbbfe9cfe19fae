import type { AttemptRecord, DeliveryDoc, DeliveryStatus } from '../records/delivery-record.js';
import type { DeliveryStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/** The ways a delivery has no reservation holding at `now`: none made, the last attempt ended it, or it ran out. */
const unreserved = (now: number) => [{ reserved_until: { $exists: false } }, { reserved_until: null }, { reserved_until: { $lt: now } }];

/** webhooks.db: webhook deliveries with their attempts. */
export class NedbDeliveryStore implements DeliveryStore {
  private constructor(private readonly db: NedbFile<DeliveryDoc>) {}

  static async open(db: NedbFile<DeliveryDoc>): Promise<NedbDeliveryStore> {
    await Promise.all([db.ensureIndex({ fieldName: 'job_id' }), db.ensureIndex({ fieldName: 'status' })]);
    return new NedbDeliveryStore(db);
  }

  async insert(doc: DeliveryDoc): Promise<boolean> {
    try {
      await this.db.insert(doc);
      return true;
    } catch (err) {
      if ((err as { errorType?: string }).errorType === 'uniqueViolated') return false;
      throw err;
    }
  }

  get(id: string): Promise<DeliveryDoc | null> {
    return this.db.findOne({ _id: id });
  }

  pending(): Promise<DeliveryDoc[]> {
    return this.db.find({ status: 'pending' });
  }

  list(filter: { job_id?: string; limit: number }): Promise<DeliveryDoc[]> {
    const query = filter.job_id === undefined ? {} : { job_id: filter.job_id };
    // Deliveries made in one millisecond by id, as PostgreSQL orders them: the same list from either store.
    return this.db.find(query).sort({ created_at: -1, _id: -1 }).limit(filter.limit);
  }

  async recordAttempt(
    id: string,
    attempt: AttemptRecord,
    next: Pick<DeliveryDoc, 'status' | 'next_attempt_at' | 'completed_at' | 'scheduled_attempts'>,
  ): Promise<DeliveryDoc | null> {
    // The attempt is over: its reservation ends with it.
    const set = { ...next, reserved_by: null, reserved_until: null };
    return (await this.db.update({ _id: id }, { $push: { attempts: attempt }, $set: set }, { returnUpdatedDocs: true })) ?? null;
  }

  async countByStatus(): Promise<Record<DeliveryStatus, number>> {
    const [pending, succeeded, failed] = await Promise.all(
      (['pending', 'succeeded', 'failed'] as const).map((status) => this.db.count({ status })),
    );
    return { pending, succeeded, failed };
  }

  async reserve(id: string, node: string, now: number, until: number): Promise<boolean> {
    const free = { _id: id, status: 'pending', $or: [...unreserved(now), { reserved_by: node }] };
    return (await this.db.update(free, { $set: { reserved_by: node, reserved_until: until } })) > 0;
  }

  due(now: number, limit: number): Promise<DeliveryDoc[]> {
    return this.db
      .find({ status: 'pending', next_attempt_at: { $lte: now }, $or: unreserved(now) })
      .sort({ next_attempt_at: 1 })
      .limit(limit);
  }

  removeFinishedBefore(cutoff: number): Promise<number> {
    return this.db.remove({ created_at: { $lt: cutoff }, status: { $ne: 'pending' } }, { multi: true });
  }
}
