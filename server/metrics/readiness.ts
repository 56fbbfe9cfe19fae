import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** What /readyz answers: ready or not, and when not, why. */
export interface Readiness {
  status: 'ready' | 'not ready';
  /** Each thing keeping the service from taking captures, in words; empty when ready. */
  reasons: string[];
  /** The engine has a browser up. */
  engine: boolean;
  browsers: { total: number; ready: number };
  /** Each datastore file and file directory: `ok`, or why it cannot be used. */
  stores: Record<string, string>;
}

export interface ReadinessSources {
  dataDir: string;
  /** False while the services start or stop. */
  started(): boolean;
  browsers(): { total: number; ready: number };
}

const STORE_FILES = ['accounts', 'keys', 'jobs', 'usage', 'settings', 'webhooks'].map((name) => `${name}.db`);
const FILE_DIRS = ['files', 'sources'];

async function usable(target: string): Promise<string> {
  try {
    await fs.access(target, constants.R_OK | constants.W_OK);
    return 'ok';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'missing' : code === 'EACCES' || code === 'EROFS' ? 'not writable' : code ?? String(err);
  }
}

/**
 * Whether the service can take captures now: started, a browser up, and every datastore file
 * and file directory of the data directory readable and writable. A browser down while another
 * is up still leaves it ready (the engine is relaunching it); its count shows in `browsers`.
 */
export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const reasons: string[] = [];
  if (!sources.started()) reasons.push('the service is starting or shutting down');
  const browsers = sources.browsers();
  if (browsers.ready === 0) {
    reasons.push(browsers.total === 1 ? 'the browser is down (it is being started)' : `none of the ${browsers.total} browsers is up (they are being started)`);
  }
  const stores: Record<string, string> = {};
  for (const name of [...STORE_FILES, ...FILE_DIRS]) {
    stores[name] = await usable(path.join(sources.dataDir, name));
    if (stores[name] !== 'ok') reasons.push(`${name} in ${sources.dataDir} is ${stores[name]}`);
  }
  return { status: reasons.length ? 'not ready' : 'ready', reasons, engine: browsers.ready > 0, browsers, stores };
}
