import type { Logger } from '../../logger.js';
import { SerialByKey } from '../../serial-by-key.js';
import type { CheckRecord, MonitorRecord } from '../records/monitor-record.js';
import type { MonitorStore } from '../stores.js';
import { type MonitorSecretFiles, openMonitorSecretFiles } from './monitor-secret-files.js';
import { compactFile, type NedbFile } from './nedb-file.js';

/** Checks older than `before` in list order (at, then id, both descending). */
const olderThan = (before: { at: number; id: string }) => ({ $or: [{ at: { $lt: before.at } }, { at: before.at, _id: { $lt: before.id } }] });

/** A monitor as monitors.db kept it before its secrets were kept apart. */
type LegacyMonitor = MonitorRecord & { sealed_secrets?: string | null };

/**
 * monitors.db and checks.db: the monitors, and their checks; each monitor's sealed secrets in
 * its own file (MonitorSecretFiles), never in a line of monitors.db.
 */
export class NedbMonitorStore implements MonitorStore {
  /** Inserts take turns per account (so the count each reads is current), changes of secrets per monitor. */
  private readonly turns = new SerialByKey();

  private constructor(
    private readonly monitors: NedbFile<MonitorRecord>,
    private readonly checkFile: NedbFile<CheckRecord>,
    private readonly secretFiles: MonitorSecretFiles,
  ) {}

  static async open(monitors: NedbFile<MonitorRecord>, checks: NedbFile<CheckRecord>, dataDir: string, log: Logger): Promise<NedbMonitorStore> {
    await Promise.all([
      monitors.ensureIndex({ fieldName: 'account_id' }),
      monitors.ensureIndex({ fieldName: 'next_run_at' }),
      checks.ensureIndex({ fieldName: 'monitor_id' }),
      checks.ensureIndex({ fieldName: 'status' }),
      // The history period's purge, oldest first.
      checks.ensureIndex({ fieldName: 'at' }),
    ]);
    const secretFiles = await openMonitorSecretFiles(dataDir);
    await moveSealedSecrets(monitors, secretFiles, log);
    await secretFiles.sweep(async (id) => (await monitors.count({ _id: id })) > 0);
    return new NedbMonitorStore(monitors, checks, secretFiles);
  }

  insert(monitor: MonitorRecord, secrets: string | null, max: number): Promise<boolean> {
    return this.turns.run(`account:${monitor.account_id}`, async () => {
      if ((await this.monitors.count({ account_id: monitor.account_id })) >= max) return false;
      if (secrets !== null) await this.secretFiles.put(monitor._id, secrets);
      try {
        await this.monitors.insert(monitor);
      } catch (err) {
        await this.secretFiles.remove(monitor._id).catch(() => undefined);
        throw err;
      }
      return true;
    });
  }

  get(id: string): Promise<MonitorRecord | null> {
    return this.monitors.findOne({ _id: id });
  }

  list(accountId: string): Promise<MonitorRecord[]> {
    return this.monitors.find({ account_id: accountId }).sort({ created_at: 1, _id: 1 });
  }

  async update(id: string, change: Partial<Omit<MonitorRecord, '_id' | 'account_id'>>, secrets?: string | null): Promise<MonitorRecord | null> {
    const set = async () => (await this.monitors.update({ _id: id }, { $set: change }, { returnUpdatedDocs: true })) ?? null;
    if (secrets === undefined) return set();
    return this.turns.run(`monitor:${id}`, async () => {
      // Erased after the record no longer names them; new ones written before it does, and put back as they were if it cannot be changed.
      if (secrets === null) {
        const updated = await set();
        await this.secretFiles.remove(id);
        return updated;
      }
      const before = await this.secretFiles.get(id);
      await this.secretFiles.put(id, secrets);
      let updated: MonitorRecord | null = null;
      try {
        updated = await set();
      } finally {
        if (!updated) await (before === null ? this.secretFiles.remove(id) : this.secretFiles.put(id, before)).catch(() => undefined);
      }
      return updated;
    });
  }

  secrets(id: string): Promise<string | null> {
    return this.secretFiles.get(id);
  }

  remove(id: string): Promise<CheckRecord[]> {
    return this.turns.run(`monitor:${id}`, async () => {
      const checks = await this.checkFile.find({ monitor_id: id });
      await this.checkFile.remove({ monitor_id: id }, { multi: true });
      await this.monitors.remove({ _id: id }, {});
      await this.secretFiles.remove(id);
      return checks;
    });
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

  async removeChecksBefore(cutoff: number, limit: number): Promise<CheckRecord[]> {
    const old = await this.checkFile.find({ at: { $lt: cutoff }, status: { $ne: 'pending' } }).sort({ at: 1, _id: 1 }).limit(limit);
    if (old.length) await this.checkFile.remove({ _id: { $in: old.map((check) => check._id) } }, { multi: true });
    return old;
  }
}

/**
 * A data directory from before the secrets were kept apart: each monitor's sealed secrets move
 * to its file, the records lose `sealed_secrets`, and monitors.db is folded so no line of it
 * holds them any more.
 */
async function moveSealedSecrets(monitors: NedbFile<MonitorRecord>, files: MonitorSecretFiles, log: Logger): Promise<void> {
  const sealed = (await monitors.find({ sealed_secrets: { $exists: true } })) as LegacyMonitor[];
  if (sealed.length === 0) return;
  let moved = 0;
  for (const monitor of sealed) {
    if (typeof monitor.sealed_secrets !== 'string') continue;
    await files.put(monitor._id, monitor.sealed_secrets);
    moved++;
  }
  await monitors.update({ sealed_secrets: { $exists: true } }, { $unset: { sealed_secrets: true } }, { multi: true });
  await compactFile(monitors as unknown as NedbFile<{ _id: string }>);
  log.info(`moved the sealed secrets of ${moved} monitor(s) out of monitors.db`);
}
