import fs from 'node:fs/promises';
import path from 'node:path';

import Datastore from 'nedb-promises';

import type { Logger } from '../../logger.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, usable } from '../data-dir.js';
import { DirectoryFileStore, type FileStore } from '../file-store.js';
import type { AccountRecord } from '../records/account-record.js';
import type { BatchRecord } from '../records/batch-record.js';
import type { DeliveryDoc } from '../records/delivery-record.js';
import type { DestinationRecord } from '../records/destination-record.js';
import type { IdempotencyRecord } from '../records/idempotency-record.js';
import { hasEnded, type JobRecord } from '../records/job-record.js';
import type { KeyRecord } from '../records/key-record.js';
import type { LoginRecord } from '../records/login-record.js';
import type { CheckRecord, MonitorRecord } from '../records/monitor-record.js';
import type { SettingsStore, Stores } from '../stores.js';
import { loadGuarded } from './datafile-guard.js';
import { type PreparedJobs, prepareJobsFile } from './history-prefilter.js';
import { JobSecretFiles } from './job-secret-files.js';
import { NedbAccountStore } from './nedb-account-store.js';
import { type BatchItemsDoc, NedbBatchStore } from './nedb-batch-store.js';
import { NedbDeliveryStore } from './nedb-delivery-store.js';
import { NedbDestinationStore } from './nedb-destination-store.js';
import { compactFile, type NedbFile } from './nedb-file.js';
import { NedbIdempotencyStore } from './nedb-idempotency-store.js';
import { NedbJobStore } from './nedb-job-store.js';
import { NedbKeyStore } from './nedb-key-store.js';
import { NedbLeftOutJobs } from './nedb-left-out.js';
import { NedbLoginStore } from './nedb-login-store.js';
import { NedbMonitorStore } from './nedb-monitor-store.js';
import { NedbSettingsStore, NedbSharedValues, type SettingsDoc } from './nedb-settings-store.js';
import { type HourDoc, NedbStatsStore } from './nedb-stats-store.js';
import { NedbUsageStore, type UsageDoc } from './nedb-usage-store.js';

const NAMES = ['accounts', 'keys', 'jobs', 'usage', 'stats', 'webhooks', 'monitors', 'checks', 'destinations', 'idempotency', 'logins', 'batches', 'batch-items'] as const;

export interface OpenOptions {
  /**
   * Given the saved settings, the time before which ended jobs are past the history period, or
   * null to load jobs.db whole: those jobs' lines are left out of the file before it is loaded.
   */
  historyCutoff?: (settings: SettingsStore) => Promise<number | null>;
  /** Where the images and page sources of the jobs left out are removed from (--files). @default the data directory's */
  files?: FileStore;
}

/**
 * Opens every store in `dataDir`, each a NeDB datafile held in memory. A file with unreadable
 * lines (a write cut short by a crash or a full disk) still opens: the unreadable lines are
 * reported, a copy of the original file is kept beside it, and the readable documents are loaded.
 */
export async function openNedbStores(dataDir: string, logger: Logger, options: OpenOptions = {}): Promise<Stores> {
  const log = logger.child({ component: 'stores' });
  await fs.mkdir(dataDir, { recursive: true });
  // Settings first: the history period they hold decides what of jobs.db is loaded at all.
  const settingsFile = await openFile(dataDir, 'settings', log);
  const settings = new NedbSettingsStore(settingsFile as NedbFile<SettingsDoc>);
  const cutoff = options.historyCutoff ? await options.historyCutoff(settings) : null;
  // Only read: what is left out is removed from disk by the retention sweep, after the start (leftOut).
  const preparedJobs = cutoff === null ? undefined : await prepareJobsFile(path.join(dataDir, 'jobs.db'), cutoff, log);
  const hadStats = await exists(path.join(dataDir, 'stats.db'));
  const [accounts, keys, jobs, usage, stats, webhooks, monitors, checks, destinations, idempotency, logins, batches, batchItems] = await Promise.all(
    NAMES.map((name) => openFile(dataDir, name, log, name === 'jobs' ? preparedJobs : undefined)),
  );
  const stores = {
    accounts: await NedbAccountStore.open(accounts as NedbFile<AccountRecord>, log),
    keys: await NedbKeyStore.open(keys as NedbFile<KeyRecord>, log),
    jobs: await NedbJobStore.open(jobs as NedbFile<JobRecord>),
    usage: await NedbUsageStore.open(usage as NedbFile<UsageDoc>),
    stats: new NedbStatsStore(stats as NedbFile<HourDoc>),
    settings,
    shared: new NedbSharedValues(settingsFile as NedbFile<SettingsDoc>),
    deliveries: await NedbDeliveryStore.open(webhooks as NedbFile<DeliveryDoc>),
    monitors: await NedbMonitorStore.open(monitors as NedbFile<MonitorRecord>, checks as NedbFile<CheckRecord>, dataDir, log),
    logins: await NedbLoginStore.open(logins as NedbFile<LoginRecord>, dataDir),
    destinations: new NedbDestinationStore(destinations as NedbFile<DestinationRecord>),
    idempotency: await NedbIdempotencyStore.open(idempotency as NedbFile<IdempotencyRecord>),
    batches: await NedbBatchStore.open(batches as NedbFile<BatchRecord>, batchItems as NedbFile<BatchItemsDoc>),
  };
  const jobSecrets = await JobSecretFiles.open(dataDir, stores.jobs);
  await moveSealedSecrets(jobs as NedbFile<JobRecord>, jobSecrets, log);
  // A data directory from before the hourly figures were kept: the dashboard's day is counted once from the jobs.
  if (!hadStats) await stores.stats.countFrom(await stores.jobs.endedSince(Date.now() - 2 * 86_400_000));
  const leftOut =
    preparedJobs &&
    new NedbLeftOutJobs(preparedJobs, { files: options.files ?? new DirectoryFileStore(dataDir), fold: () => compactFile(jobs), log });
  const files = [accounts, keys, jobs, usage, stats, webhooks, monitors, checks, destinations, idempotency, logins, batches, batchItems, settingsFile];
  const fileNames = [...NAMES, 'settings'].map((name) => `${name}.db`).sort();
  return {
    backend: 'nedb',
    ...stores,
    jobSecrets,
    health: async () => Object.fromEntries(await Promise.all(fileNames.map(async (name) => [name, await usable(path.join(dataDir, name))] as const))),
    // jobs.db keeps the lines of the jobs left out at start until their files are gone.
    compact: () => compactFiles(leftOut && !leftOut.mayFold() ? files.filter((file) => file !== jobs) : files),
    leftOut,
    close: async () => undefined,
  };
}

/**
 * A data directory from before the secrets were kept apart: the sealed secrets of waiting jobs
 * move to `job-secrets/`, every job record loses its `sealed_secrets`, and jobs.db is rewritten
 * so no line of it holds them any more.
 */
async function moveSealedSecrets(jobs: NedbFile<JobRecord>, secrets: JobSecretFiles, log: Logger): Promise<void> {
  const sealed = await jobs.find({ sealed_secrets: { $exists: true } });
  if (sealed.length === 0) return;
  const waiting = sealed.filter((job) => typeof job.sealed_secrets === 'string' && !hasEnded(job.status));
  await secrets.put(waiting.map((job) => ({ id: job._id, sealed: job.sealed_secrets as string })));
  for (const job of waiting) await jobs.update({ _id: job._id }, { $set: { has_secrets: true } });
  await jobs.update({ sealed_secrets: { $exists: true } }, { $unset: { sealed_secrets: true } }, { multi: true });
  await compactFile(jobs as unknown as NedbFile<{ _id: string }>);
  log.info(`moved the sealed secrets of ${waiting.length} waiting job(s) out of jobs.db`);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** Opens one datafile; `prepared`: what the history prefilter read of it already, when it was jobs.db. */
async function openFile(dataDir: string, name: string, log: Logger, prepared?: PreparedJobs): Promise<NedbFile<{ _id: string }>> {
  const filename = path.join(dataDir, `${name}.db`);
  // The prefilter has read the file already: its unreadable lines were counted then.
  const { corrupt, endsMidLine } = prepared ?? (await inspectDatafile(filename));
  let rewrite = true;
  if (corrupt > 0) {
    const copy = `${filename}.corrupt-${Date.now()}`;
    try {
      await fs.copyFile(filename, copy);
      log.warn(`${name}.db had ${corrupt} unreadable line(s), skipped; the original file was kept as ${copy}`);
    } catch (err) {
      // Most likely the disk is full. Without a copy the damaged file itself must stay as it
      // is, so it is not compacted in this run; a later start keeps the copy.
      await fs.rm(copy, { force: true }).catch(() => undefined);
      rewrite = false;
      log.warn(`${name}.db had ${corrupt} unreadable line(s), skipped; no copy could be kept (${(err as NodeJS.ErrnoException).code ?? String(err)}), so the file is left as it is`);
    }
  }
  const options = {
    filename,
    autoload: false,
    corruptAlertThreshold: corrupt > 0 ? 1 : 0.1,
    // Passed on to @seald-io/nedb, whose `modes` nedb-promises' types do not list yet.
    modes: { fileMode: PRIVATE_FILE_MODE, dirMode: PRIVATE_DIR_MODE },
  };
  const store = Datastore.create(options);
  // What the prefilter parsed is loaded as it is: folding the file is left to the sweep, once the jobs left out have no files.
  await loadGuarded(store, { filename, endsMidLine, rewrite, parsed: prepared?.parsed, compact: prepared?.parsed !== undefined, log });
  return store;
}

async function inspectDatafile(filename: string): Promise<{ corrupt: number; endsMidLine: boolean }> {
  let text: string;
  try {
    text = await fs.readFile(filename, 'utf8');
  } catch {
    return { corrupt: 0, endsMidLine: false };
  }
  let corrupt = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      JSON.parse(line);
    } catch {
      corrupt++;
    }
  }
  return { corrupt, endsMidLine: text.length > 0 && !text.endsWith('\n') };
}

/**
 * Rewrites every datafile compactly (NeDB appends; this folds the log). Returns only when
 * every file is done, so one failure (a full disk) does not leave the others' half-written
 * `<file>~` copies behind the caller's back; the first failure is then thrown.
 */
async function compactFiles(files: ReadonlyArray<NedbFile<{ _id: string }>>): Promise<void> {
  const results = await Promise.allSettled(files.map(compactFile));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
