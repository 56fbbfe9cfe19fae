import fs from 'node:fs';
import path from 'node:path';

import { isDiskFull } from './disk-full.js';

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

export interface DataLock {
  release(): void;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes `<dataDir>/.lock` so that one process owns a data directory. A lock whose process
 * is gone (a server killed with SIGKILL) is stale and taken over.
 */
export function acquireDataLock(dataDir: string): DataLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, '.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      let content = String(process.pid);
      try {
        fs.writeSync(fd, content);
      } catch (err) {
        // On a full disk the lock is the file alone; without the pid a later start takes it
        // for a stale one, which beats not starting at all.
        if (!isDiskFull(err)) throw err;
        content = '';
      } finally {
        fs.closeSync(fd);
      }
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8').trim() === content) fs.unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DataDirLockedError(
          `Another Screenshot Appliance (pid ${pid}) is already using the data directory ${dataDir}. ` +
            'Stop it first, or start this one with a different --data directory.',
        );
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not take the lock ${file}`);
}
