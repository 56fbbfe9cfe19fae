import fs from 'node:fs/promises';
import path from 'node:path';

import Datastore from 'nedb-promises';

import type { Logger } from '../logger.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.js';
import { loadGuarded } from './datafile-guard.js';
import { FileStore } from './file-store.js';
import { dropJobsBefore } from './history-prefilter.js';

/** A NeDB datastore of plain documents. */
// NeDB documents are untyped until each store is a typed class of its own (issue 14).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Store = Datastore<Record<string, any>>;

export interface Stores {
  accounts: Store;
  keys: Store;
  jobs: Store;
  usage: Store;
  settings: Store;
  webhooks: Store;
}

const NAMES = ['accounts', 'keys', 'jobs', 'usage', 'settings', 'webhooks'] as const;

export interface OpenOptions {
  /**
   * Given the settings store, the time before which ended jobs are past the history period, or
   * null to load jobs.db whole: those jobs' lines are left out of the file before it is loaded.
   */
  historyCutoff?: (settings: Store) => Promise<number | null>;
}

/**
 * Opens every datastore in `dataDir`. A file with unreadable lines (a write cut short by a
 * crash or a full disk) still opens: the unreadable lines are reported, a copy of the
 * original file is kept beside it, and the readable documents are loaded.
 */
export async function openStores(dataDir: string, logger: Logger, options: OpenOptions = {}): Promise<Stores> {
  const log = logger.child({ component: 'stores' });
  await fs.mkdir(dataDir, { recursive: true });
  // Settings first: the history period they hold decides what of jobs.db is loaded at all.
  const settings = await openStore(dataDir, 'settings', log);
  const cutoff = options.historyCutoff ? await options.historyCutoff(settings) : null;
  if (cutoff !== null) {
    const { withFiles } = await dropJobsBefore(path.join(dataDir, 'jobs.db'), cutoff, log);
    const files = new FileStore(dataDir);
    for (const { jobId, image } of withFiles) await files.remove(image ?? undefined, jobId);
  }
  const others = NAMES.filter((name) => name !== 'settings');
  const entries = await Promise.all(others.map(async (name) => [name, await openStore(dataDir, name, log)] as const));
  const stores = Object.fromEntries([...entries, ['settings', settings]]) as unknown as Stores;
  await Promise.all([
    keyHashIndex(stores.keys, log),
    stores.keys.ensureIndex({ fieldName: 'account_id' }),
    stores.jobs.ensureIndex({ fieldName: 'account_id' }),
    stores.jobs.ensureIndex({ fieldName: 'status' }),
    // The job list (newest first, in time windows) and the dashboard's hours read ranges of these.
    stores.jobs.ensureIndex({ fieldName: 'created_at' }),
    stores.jobs.ensureIndex({ fieldName: 'completed_at', sparse: true }),
    // GET /v1/files/<name> looks the job up by its image file on every request, unauthenticated.
    stores.jobs.ensureIndex({ fieldName: 'image_file', sparse: true }),
    // Result-cache lookups (cache_ttl), on jobs whose request asked for one.
    stores.jobs.ensureIndex({ fieldName: 'cache_key', sparse: true }),
    stores.usage.ensureIndex({ fieldName: 'account_id' }),
  ]);
  return stores;
}

/**
 * Key hashes are unique. A keys.db edited by hand or restored from two backups can still hold
 * two records with one hash; that must not keep the server from starting. The index then
 * falls back to a plain one and ApiKeyService refuses every key whose hash is not unique.
 */
async function keyHashIndex(keys: Store, log: Logger): Promise<void> {
  try {
    await keys.ensureIndex({ fieldName: 'hash', unique: true });
  } catch {
    await keys.removeIndex('hash').catch(() => undefined);
    await keys.ensureIndex({ fieldName: 'hash' });
    const records = (await keys.find({})) as Array<{ _id: string; hash: string }>;
    const byHash = new Map<string, string[]>();
    for (const r of records) byHash.set(r.hash, [...(byHash.get(r.hash) ?? []), r._id]);
    const shared = [...byHash.values()].filter((ids) => ids.length > 1);
    log.warn(`keys.db holds ${shared.length} key hash(es) shared by several records (${shared.map((ids) => ids.join(' = ')).join('; ')}); those keys are refused until the duplicates are removed`);
  }
}

async function openStore(dataDir: string, name: string, log: Logger): Promise<Store> {
  const filename = path.join(dataDir, `${name}.db`);
  const { corrupt, endsMidLine } = await inspectDatafile(filename);
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
  const store: Store = Datastore.create(options);
  await loadGuarded(store, { filename, endsMidLine, rewrite, log });
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

/** Rewrites one datastore's file compactly, dropping the lines of removed and replaced documents. */
export function compactStore(store: Store): Promise<void> {
  return (store as unknown as { __original: { compactDatafileAsync(): Promise<void> } }).__original.compactDatafileAsync();
}

/**
 * Rewrites every datastore file compactly (NeDB appends; this folds the log). Returns only when
 * every store is done, so one failure (a full disk) does not leave the others' half-written
 * `<file>~` copies behind the caller's back; the first failure is then thrown.
 */
export async function compactStores(stores: Stores): Promise<void> {
  const results = await Promise.allSettled(Object.values(stores).map(compactStore));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
