import path from 'node:path';

import type { BrowserCount } from '../capture/engine.js';
import { usable } from '../store/data-dir.js';
import type { FilesHealth } from '../store/file-store.js';

/** What /readyz answers: ready or not, and when not, why. */
export interface Readiness {
  status: 'ready' | 'not ready';
  /** Each thing keeping the service from taking captures, in words; empty when ready. */
  reasons: string[];
  /** The engine has a browser up. */
  engine: boolean;
  /** How many browsers, how many are up, and which are down (numbered from 1). */
  browsers: BrowserCount;
  /** Each part of the store (NeDB's files, or the PostgreSQL connection) and each file directory: `ok`, or why it cannot be used. */
  stores: Record<string, string>;
}

export interface ReadinessSources {
  /** Whether the files location (FileStore.health: a directory's parts, or the bucket) can be used. */
  files?: () => Promise<FilesHealth>;
  /** Or, without `files`: the directory where images and page sources are kept. */
  filesDir?: string;
  /** The stores' own report (Stores.health). */
  stores(): Promise<Record<string, string>>;
  /** False while the services start or stop. */
  started(): boolean;
  browsers(): BrowserCount;
}

const FILE_DIRS = ['files', 'sources'];

async function filesHealth(sources: ReadinessSources): Promise<FilesHealth> {
  if (sources.files) return sources.files().catch((err: unknown) => ({ where: 'the files location', parts: { files: err instanceof Error ? err.message : String(err) } }));
  const dir = sources.filesDir ?? '.';
  const parts: Record<string, string> = {};
  for (const name of FILE_DIRS) parts[name] = await usable(path.join(dir, name));
  return { where: dir, parts };
}

/**
 * Whether the service can take captures now: started, a browser up, every datastore file
 * readable and writable, and the files location too (its directories, or its bucket answering
 * HeadBucket in time). A browser down while another is up still leaves it ready (the engine is
 * relaunching it); its count shows in `browsers`.
 */
export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const reasons: string[] = [];
  if (!sources.started()) reasons.push('the service is starting or shutting down');
  const browsers = sources.browsers();
  if (browsers.ready === 0) {
    reasons.push(browsers.total === 1 ? 'the browser is down (it is being started)' : `none of the ${browsers.total} browsers is up (they are being started)`);
  }
  const stores: Record<string, string> = await sources.stores().catch((err: unknown) => ({ store: err instanceof Error ? err.message : String(err) }));
  for (const [name, state] of Object.entries(stores)) {
    if (state !== 'ok') reasons.push(`${name} is ${state}`);
  }
  const files = await filesHealth(sources);
  for (const [name, state] of Object.entries(files.parts)) {
    stores[name] = state;
    if (state !== 'ok') reasons.push(`${name} in ${files.where} is ${state}`);
  }
  return { status: reasons.length ? 'not ready' : 'ready', reasons, engine: browsers.ready > 0, browsers, stores };
}
