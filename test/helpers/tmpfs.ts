import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { tempDir } from './temp-dir.js';

/** A small file system of its own, to fill up. */
export interface Tmpfs {
  dir: string;
  /**
   * Writes a filler file until not one more byte fits. The files in `topUp` are first padded
   * with newlines to the end of their last page (less `leave` bytes), so that not even a short
   * append to them fits: the room a tmpfs file has left in its last page is otherwise a
   * matter of chance. NeDB skips blank lines.
   */
  fill(topUp?: Array<string | { file: string; leave: number }>): Promise<void>;
  /** Removes the filler: space comes back. */
  free(): Promise<void>;
  /** Bytes still available. */
  available(): Promise<number>;
  unmount(): Promise<void>;
}

const FILLER = 'filler.bin';

/**
 * Mounts a tmpfs of `size` (mount's syntax, e.g. "4m") on a fresh directory. Mounting needs
 * root; the answer is then a string saying why there is no tmpfs, for the test to print.
 */
export async function mountTmpfs(size: string, prefix = 'sa-tmpfs-'): Promise<Tmpfs | string> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'mounting a tmpfs needs root on Linux';
  const dir = await tempDir(prefix);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe', timeout: 10_000 });
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs (${String((err as Error).message).trim()})`;
  }
  const filler = path.join(dir, FILLER);
  const available = async () => {
    const stats = await fs.statfs(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    available,
    async fill(topUp = []) {
      const { bsize } = await fs.statfs(dir);
      for (const entry of topUp) {
        const { file, leave } = typeof entry === 'string' ? { file: entry, leave: 0 } : entry;
        const { size } = await fs.stat(file);
        const pad = (bsize - (size % bsize) - leave + bsize) % bsize;
        if (pad) await fs.appendFile(file, '\n'.repeat(pad));
      }
      const handle = await fs.open(filler, 'a');
      try {
        // Large blocks first, then pages, then single bytes, until the last one is refused.
        for (const size of [64 * 1024, 4096, 1]) {
          const block = Buffer.alloc(size, 1);
          try {
            for (;;) await handle.write(block);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          }
        }
      } finally {
        await handle.close();
      }
    },
    async free() {
      await fs.rm(filler, { force: true });
    },
    async unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe', timeout: 10_000 });
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
