import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.js';

/**
 * Images and page sources as files in the data directory. Writes go to a temporary name
 * and are renamed, so a reader never sees half a file and a crash leaves no partial one.
 */
export class FileStore {
  readonly imagesDir: string;
  readonly sourcesDir: string;

  constructor(dataDir: string) {
    this.imagesDir = path.join(dataDir, 'files');
    this.sourcesDir = path.join(dataDir, 'sources');
  }

  async init(): Promise<void> {
    await fs.mkdir(this.imagesDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.mkdir(this.sourcesDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await removeTemporaries(this.imagesDir);
    await removeTemporaries(this.sourcesDir);
  }

  imagePath(fileName: string): string {
    return path.join(this.imagesDir, path.basename(fileName));
  }

  sourcePath(jobId: string): string {
    return path.join(this.sourcesDir, `${path.basename(jobId)}.html`);
  }

  writeImage(fileName: string, data: Buffer): Promise<void> {
    return writeAtomic(this.imagePath(fileName), data);
  }

  writeSource(jobId: string, html: string): Promise<void> {
    return writeAtomic(this.sourcePath(jobId), html);
  }

  async readSource(jobId: string): Promise<string | null> {
    try {
      return await fs.readFile(this.sourcePath(jobId), 'utf8');
    } catch {
      return null;
    }
  }

  async remove(fileName: string | undefined, jobId: string): Promise<void> {
    if (fileName) await fs.rm(this.imagePath(fileName), { force: true });
    await fs.rm(this.sourcePath(jobId), { force: true });
  }
}

async function writeAtomic(file: string, data: Buffer | string): Promise<void> {
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  try {
    await fs.writeFile(tmp, data, { mode: PRIVATE_FILE_MODE });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

async function removeTemporaries(dir: string): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    if (name.endsWith('.tmp')) await fs.rm(path.join(dir, name), { force: true });
  }
}
