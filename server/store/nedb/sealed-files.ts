import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';

/** Ids as the service makes them: a file name, never a path. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A private folder of the data directory (0700) holding one sealed value a file (0600), named by
 * its record's id: replaced whole (a temporary file renamed over it) and unlinked with the
 * record, so the append-only lines of a NeDB datafile, which outlive every version of a record
 * until a fold, never hold the value, and one replaced or removed leaves no copy behind.
 * `what` names the records in errors ("job", "monitor").
 */
export class SealedFiles {
  private constructor(
    private readonly dir: string,
    private readonly what: string,
  ) {}

  static async open(dataDir: string, folder: string, what: string): Promise<SealedFiles> {
    const dir = path.join(dataDir, folder);
    await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.chmod(dir, PRIVATE_DIR_MODE);
    return new SealedFiles(dir, what);
  }

  async put(id: string, sealed: string): Promise<void> {
    if (!SAFE_ID.test(id)) throw new Error(`not a ${this.what} id: ${JSON.stringify(id)}`);
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

  /** Removes the files whose record `keep` says is gone, and writes cut short; how many. */
  async sweep(keep: (id: string) => Promise<boolean>): Promise<number> {
    let removed = 0;
    for (const name of await fs.readdir(this.dir)) {
      if (SAFE_ID.test(name) && (await keep(name))) continue;
      await fs.rm(path.join(this.dir, name), { force: true, recursive: true });
      removed++;
    }
    return removed;
  }
}
