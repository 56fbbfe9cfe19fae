import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import sharp from 'sharp';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.js';

/** A thumbnail's width in pixels, and its tallest height (the top of a full page). */
export const THUMBNAIL_WIDTH = 320;
const THUMBNAIL_MAX_HEIGHT = 480;
const THUMBNAIL_QUALITY = 70;

/**
 * A small WebP of a screenshot for lists: THUMBNAIL_WIDTH wide (never enlarged), the top
 * THUMBNAIL_MAX_HEIGHT pixels of a tall one. 8–25 KB for a 1920×1080 page.
 */
export async function makeThumbnail(image: Buffer): Promise<Buffer> {
  return sharp(image, { limitInputPixels: false })
    .resize({ width: THUMBNAIL_WIDTH, withoutEnlargement: true })
    .resize({ height: THUMBNAIL_MAX_HEIGHT, width: THUMBNAIL_WIDTH, fit: 'cover', position: 'top', withoutEnlargement: true })
    .webp({ quality: THUMBNAIL_QUALITY })
    .toBuffer();
}

/**
 * Images and page sources as files in the data directory. Writes go to a temporary name
 * and are renamed, so a reader never sees half a file and a crash leaves no partial one.
 */
export class FileStore {
  readonly imagesDir: string;
  readonly sourcesDir: string;
  /** Thumbnails, named by their image's capability name; made again from the image when missing. */
  readonly thumbnailsDir: string;

  /** `root`: the data directory, or the directory every node of a cluster mounts (--files). */
  constructor(readonly root: string) {
    this.imagesDir = path.join(root, 'files');
    this.sourcesDir = path.join(root, 'sources');
    this.thumbnailsDir = path.join(root, 'thumbnails');
  }

  async init(): Promise<void> {
    for (const dir of [this.imagesDir, this.sourcesDir, this.thumbnailsDir]) {
      await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      await removeTemporaries(dir);
    }
  }

  /** The thumbnail of image `fileName` (always WebP). */
  thumbnailPath(fileName: string): string {
    return path.join(this.thumbnailsDir, `${path.basename(fileName).replace(/\.[a-z]+$/, '')}.webp`);
  }

  /** Makes and stores the thumbnail of an image. */
  async writeThumbnail(fileName: string, image: Buffer): Promise<Buffer> {
    const thumbnail = await makeThumbnail(image);
    await writeAtomic(this.thumbnailPath(fileName), thumbnail);
    return thumbnail;
  }

  /** The thumbnail of image `fileName`, made from the image the first time (jobs of earlier versions); null without an image. */
  async readThumbnail(fileName: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.thumbnailPath(fileName));
    } catch {
      // made below
    }
    let image: Buffer;
    try {
      image = await fs.readFile(this.imagePath(fileName));
    } catch {
      return null;
    }
    return this.writeThumbnail(fileName, image);
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

  /** An image as stored (a screenshot, or a monitor's diff picture), or null when it is gone. */
  async readImage(fileName: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.imagePath(fileName));
    } catch {
      return null;
    }
  }

  /** Removes one image and its thumbnail (a monitor's diff picture, which belongs to no job). */
  async removeImage(fileName: string): Promise<void> {
    await fs.rm(this.imagePath(fileName), { force: true });
    await fs.rm(this.thumbnailPath(fileName), { force: true });
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

  /** Where an extracted output of a job is kept, next to its page source. */
  outputPath(jobId: string, output: StoredOutput): string {
    return path.join(this.sourcesDir, `${path.basename(jobId)}.${OUTPUT_EXTENSIONS[output]}`);
  }

  writeOutput(jobId: string, output: StoredOutput, content: string): Promise<void> {
    return writeAtomic(this.outputPath(jobId, output), content);
  }

  async readOutput(jobId: string, output: StoredOutput): Promise<string | null> {
    try {
      return await fs.readFile(this.outputPath(jobId, output), 'utf8');
    } catch {
      return null;
    }
  }

  async remove(fileName: string | undefined, jobId: string): Promise<void> {
    if (fileName) {
      await fs.rm(this.imagePath(fileName), { force: true });
      await fs.rm(this.thumbnailPath(fileName), { force: true });
    }
    await fs.rm(this.sourcePath(jobId), { force: true });
    for (const output of STORED_OUTPUTS) await fs.rm(this.outputPath(jobId, output), { force: true });
  }
}

/** The extracted outputs kept as files (extract.ts); metadata is kept in the job. */
export const STORED_OUTPUTS = ['markdown', 'text', 'links'] as const;
export type StoredOutput = (typeof STORED_OUTPUTS)[number];
const OUTPUT_EXTENSIONS: Record<StoredOutput, string> = { markdown: 'md', text: 'txt', links: 'links.json' };

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
