import { utcHourStart } from '../../time.js';
import { type EndStatus, hasEnded, type JobRecord } from '../records/job-record.js';
import type { HourlyEnds, StatsStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/** One hour's job ends in stats.db, under the id `h<hour>`. */
export type HourDoc = HourlyEnds & { _id: string };

/** stats.db: job ends per hour, counted as jobs end, so the dashboard never scans jobs. */
export class NedbStatsStore implements StatsStore {
  constructor(private readonly db: NedbFile<HourDoc>) {}

  async countEnd(hour: number, status: EndStatus): Promise<void> {
    await this.db.update({ _id: `h${hour}` }, { $inc: { [status]: 1 }, $set: { hour } }, { upsert: true });
  }

  /** Counts the ends of jobs stored before the hours were kept: one write an hour, not one a job. */
  async countFrom(jobs: readonly JobRecord[]): Promise<void> {
    const hours = new Map<number, { completed: number; failed: number }>();
    for (const job of jobs) {
      if (job.completed_at === null || !hasEnded(job.status)) continue;
      const hour = utcHourStart(job.completed_at);
      const counts = hours.get(hour) ?? { completed: 0, failed: 0 };
      counts[job.status]++;
      hours.set(hour, counts);
    }
    for (const [hour, counts] of hours) await this.db.update({ _id: `h${hour}` }, { $inc: counts, $set: { hour } }, { upsert: true });
  }

  async hoursSince(fromHour: number): Promise<HourlyEnds[]> {
    const docs = await this.db.find({ hour: { $gte: fromHour } }).sort({ hour: 1 });
    return docs.map((d) => ({ hour: d.hour, completed: d.completed ?? 0, failed: d.failed ?? 0 }));
  }

  async prune(beforeHour: number): Promise<void> {
    await this.db.remove({ hour: { $lt: beforeHour } }, { multi: true });
  }
}
