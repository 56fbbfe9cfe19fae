import { SerialByKey } from '../../serial-by-key.js';
import type { Admission, UsageDay, UsageStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/** One account's calls on one UTC day in usage.db. */
export type UsageDoc = UsageDay & { _id: string; month: string };

/** usage.db: calls per account and UTC day, kept after the jobs themselves are gone. */
export class NedbUsageStore implements UsageStore {
  /** One process holds the file, so one account's admissions taking turns here are exact. */
  private readonly turns = new SerialByKey();

  private constructor(private readonly db: NedbFile<UsageDoc>) {}

  static async open(db: NedbFile<UsageDoc>): Promise<NedbUsageStore> {
    await db.ensureIndex({ fieldName: 'account_id' });
    return new NedbUsageStore(db);
  }

  admit(accountId: string, at: { day: string; month: string }, calls: number, limits: { daily: number; monthly: number }): Promise<Admission> {
    return this.turns.run(accountId, async () => {
      const days = await this.month(accountId, at.month);
      const today = days.filter((d) => d.day === at.day).reduce((sum, d) => sum + d.count, 0);
      const month = days.reduce((sum, d) => sum + d.count, 0);
      const admitted = today + calls <= limits.daily && month + calls <= limits.monthly;
      if (admitted) await this.add(accountId, at, calls);
      return { admitted, today, month };
    });
  }

  async add(accountId: string, at: { day: string; month: string }, calls: number): Promise<void> {
    await this.db.update({ account_id: accountId, day: at.day }, { $inc: { count: calls }, $set: { month: at.month } }, { upsert: true });
  }

  async month(accountId: string, month: string): Promise<UsageDay[]> {
    return (await this.db.find({ account_id: accountId, month })).map(day);
  }

  async since(accountId: string | undefined, fromDay: string): Promise<UsageDay[]> {
    return (await this.db.find({ ...(accountId === undefined ? {} : { account_id: accountId }), day: { $gte: fromDay } })).map(day);
  }
}

const day = (d: UsageDoc): UsageDay => ({ account_id: d.account_id, day: d.day, count: d.count });
