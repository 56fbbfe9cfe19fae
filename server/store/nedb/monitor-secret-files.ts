import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';

/** The folder of the data directory holding the sealed secrets of monitors; never archived by `backup`. */
export const MONITOR_SECRETS_DIR = 'monitor-secrets';

/** Monitor ids as the service makes them: a file name, never a path. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The NeDB backend's monitor secrets: one file per monitor in `<data>/monitor-secrets/` (0600),
 * replaced whole (a temporary file renamed over it) and unlinked with the monitor, so neither
 * monitors.db, whose lines outlive every version of a record until a fold, nor memory holds
 * them, and a secret replaced or removed leaves no copy in the data directory.
 */
export class MonitorSecretFiles {
  private constructor(private readonly dir: string) {}

  static async open(dataDir: string): Promise<MonitorSecretFiles> {
    const dir = path.join(dataDir, MONITOR_SECRETS_DIR);
    await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.chmod(dir, PRIVATE_DIR_MODE);
    return new MonitorSecretFiles(dir);
  }

  async put(id: string, sealed: string): Promise<void> {
    if (!SAFE_ID.test(id)) throw new Error(`not a monitor id: ${JSON.stringify(id)}`);
    const target = path.join(this.dir, id);
    const temp = `${target}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    try {
      await fs.writeFile(temp, sealed, { mode: PRIVATE_FILE_MODE, flush: true });
      await fs.rename(temp, target);
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  async get(id: string): Promise<string | null> {
    if (!SAFE_ID.test(id)) return null;
    try {
      return await fs.readFile(path.join(this.dir, id), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    if (SAFE_ID.test(id)) await fs.rm(path.join(this.dir, id), { force: true });
  }

  /** At open: removes the files of monitors that are gone (a stop between a removal's two steps) and writes cut short; how many. */
  async sweep(exists: (id: string) => Promise<boolean>): Promise<number> {
    let removed = 0;
    for (const name of await fs.readdir(this.dir)) {
      if (SAFE_ID.test(name) && (await exists(name))) continue;
      await fs.rm(path.join(this.dir, name), { force: true, recursive: true });
      removed++;
    }
    return removed;
  }
}
