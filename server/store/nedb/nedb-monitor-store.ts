import type { CheckRecord, MonitorRecord } from '../records/monitor-record.js';
import type { MonitorStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/** Checks older than `before` in list order (at, then id, both descending). */
const olderThan = (before: { at: number; id: string }) => ({ $or: [{ at: { $lt: before.at } }, { at: before.at, _id: { $lt: before.id } }] });

/** monitors.db and checks.db: the monitors, and their checks. */
export class NedbMonitorStore implements MonitorStore {
  private constructor(
    private readonly monitors: NedbFile<MonitorRecord>,
    private readonly checkFile: NedbFile<CheckRecord>,
  ) {}

  static async open(monitors: NedbFile<MonitorRecord>, checks: NedbFile<CheckRecord>): Promise<NedbMonitorStore> {
    await Promise.all([
      monitors.ensureIndex({ fieldName: 'account_id' }),
      monitors.ensureIndex({ fieldName: 'next_run_at' }),
      checks.ensureIndex({ fieldName: 'monitor_id' }),
      checks.ensureIndex({ fieldName: 'status' }),
    ]);
    return new NedbMonitorStore(monitors, checks);
  }

  async insert(monitor: MonitorRecord): Promise<void> {
    await this.monitors.insert(monitor);
  }

  get(id: string): Promise<MonitorRecord | null> {
    return this.monitors.findOne({ _id: id });
  }

  list(accountId: string): Promise<MonitorRecord[]> {
    return this.monitors.find({ account_id: accountId }).sort({ created_at: 1, _id: 1 });
  }

  async update(id: string, change: Partial<Omit<MonitorRecord, '_id' | 'account_id'>>): Promise<MonitorRecord | null> {
    return (await this.monitors.update({ _id: id }, { $set: change }, { returnUpdatedDocs: true })) ?? null;
  }

  async remove(id: string): Promise<CheckRecord[]> {
    const checks = await this.checkFile.find({ monitor_id: id });
    await this.checkFile.remove({ monitor_id: id }, { multi: true });
    await this.monitors.remove({ _id: id }, {});
    return checks;
  }

  due(now: number, limit: number): Promise<MonitorRecord[]> {
    return this.monitors.find({ paused: false, next_run_at: { $lte: now } }).sort({ next_run_at: 1 }).limit(limit);
  }

  async claim(id: string, expected: number, next: number): Promise<boolean> {
    return (await this.monitors.update({ _id: id, next_run_at: expected }, { $set: { next_run_at: next } })) > 0;
  }

  async insertCheck(check: CheckRecord): Promise<void> {
    await this.checkFile.insert(check);
  }

  getCheck(id: string): Promise<CheckRecord | null> {
    return this.checkFile.findOne({ _id: id });
  }

  async updateCheck(id: string, status: CheckRecord['status'], change: Partial<Omit<CheckRecord, '_id' | 'monitor_id'>>): Promise<CheckRecord | null> {
    return (await this.checkFile.update({ _id: id, status }, { $set: change }, { returnUpdatedDocs: true })) ?? null;
  }

  checks(monitorId: string, filter: { before?: { at: number; id: string }; limit: number }): Promise<CheckRecord[]> {
    const query = filter.before ? { monitor_id: monitorId, ...olderThan(filter.before) } : { monitor_id: monitorId };
    return this.checkFile.find(query).sort({ at: -1, _id: -1 }).limit(filter.limit);
  }

  async lastCompleted(monitorId: string, device: string, before: { at: number; id: string }): Promise<CheckRecord | null> {
    const [check] = await this.checkFile.find({ monitor_id: monitorId, device, status: 'completed', ...olderThan(before) }).sort({ at: -1, _id: -1 }).limit(1);
    return check ?? null;
  }

  pendingChecks(limit: number): Promise<CheckRecord[]> {
    return this.checkFile.find({ status: 'pending' }).sort({ at: 1 }).limit(limit);
  }

  diffsBefore(cutoff: number, limit: number): Promise<CheckRecord[]> {
    return this.checkFile.find({ at: { $lt: cutoff }, diff_file: { $exists: true, $ne: null } }).sort({ at: 1 }).limit(limit);
  }
}
