import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

import sharp from 'sharp';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, usable } from './data-dir.js';
import { directoryMarkers, type MarkerPlace } from './shared-files.js';

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

/** The extracted outputs kept as files (extract.ts); metadata is kept in the job. */
export const STORED_OUTPUTS = ['markdown', 'text', 'links'] as const;
export type StoredOutput = (typeof STORED_OUTPUTS)[number];
export const OUTPUT_EXTENSIONS: Record<StoredOutput, string> = { markdown: 'md', text: 'txt', links: 'links.json' };

/** Bytes `start` to `end` of an object, both included (as HTTP's Range counts them). */
export interface ByteRange {
  start: number;
  end: number;
}

/** A stored image as a reader needs it: its size and age, and its bytes when asked for. */
export interface StoredObject {
  size: number;
  lastModified: Date;
  /** The whole object, or the bytes of `range`, streamed. */
  open(range?: ByteRange): Promise<Readable>;
}

/** What a job's files leave behind when they go: its image (if any) and its id (page source, outputs). */
export interface JobFiles {
  image?: string;
  jobId: string;
}

/** Whether the files location can be used now, for /readyz: each part `ok` or why not. */
export interface FilesHealth {
  /** The location, without credentials: a directory, or s3://bucket/prefix. */
  where: string;
  parts: Record<string, string>;
}

/**
 * Where images, thumbnails, page sources and extracted outputs are kept: a directory
 * (DirectoryFileStore) or S3-compatible object storage (S3FileStore), behind one interface and
 * one conformance suite (test/store/file-store-conformance.test.ts). Every write is
 * all-or-nothing: a reader never sees half an image. Callers never see a path.
 */
export interface FileStore {
  /** The location for messages: a path, or s3://bucket/prefix (never a credential). */
  readonly where: string;
  /** Prepares the location (directories made, a crash's temporaries removed); never lists a bucket. */
  init(): Promise<void>;
  writeImage(fileName: string, data: Buffer): Promise<void>;
  /** The stored image, or null when there is none. */
  image(fileName: string): Promise<StoredObject | null>;
  /** The whole image in memory (a screenshot, or a monitor's diff picture), or null. */
  readImage(fileName: string): Promise<Buffer | null>;
  /** Removes one image and its thumbnail (a monitor's diff picture, which belongs to no job). */
  removeImage(fileName: string): Promise<void>;
  /** Makes and stores the thumbnail of an image. */
  writeThumbnail(fileName: string, image: Buffer): Promise<Buffer>;
  /** The thumbnail of image `fileName`, made from the image the first time; null without an image. */
  readThumbnail(fileName: string): Promise<Buffer | null>;
  writeSource(jobId: string, html: string): Promise<void>;
  readSource(jobId: string): Promise<string | null>;
  writeOutput(jobId: string, output: StoredOutput, content: string): Promise<void>;
  readOutput(jobId: string, output: StoredOutput): Promise<string | null>;
  /** Removes a job's image, thumbnail, page source and outputs; what is already gone is no error. */
  remove(fileName: string | undefined, jobId: string): Promise<void>;
  /** `remove` for many jobs at once (object storage: up to 1000 keys a request). */
  removeMany(jobs: readonly JobFiles[]): Promise<void>;
  /** A short-lived address a client may fetch the image from itself; null when the store serves it only through the service. */
  presignedImageUrl(fileName: string): Promise<string | null>;
  /** The cluster's proof that every node sees the same files (shared-files.ts). */
  markers(): MarkerPlace;
  health(): Promise<FilesHealth>;
}

/** The name of the evidence bundle of image `fileName` (evidence: true), kept beside the image and removed with it. */
export const evidenceName = (fileName: string) => `${path.basename(fileName).replace(/\.[a-z]+$/, '')}.wacz`;

/** The thumbnail's name of image `fileName` (always WebP). */
export const thumbnailName = (fileName: string) => `${path.basename(fileName).replace(/\.[a-z]+$/, '')}.webp`;

/**
 * Images and page sources as files in the data directory (or --files DIR). Writes go to a
 * temporary name and are renamed, so a reader never sees half a file and a crash leaves no
 * partial one.
 */
export class DirectoryFileStore implements FileStore {
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

  get where(): string {
    return this.root;
  }

  async init(): Promise<void> {
    for (const dir of [this.imagesDir, this.sourcesDir, this.thumbnailsDir]) {
      await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      await removeTemporaries(dir);
    }
  }

  thumbnailPath(fileName: string): string {
    return path.join(this.thumbnailsDir, thumbnailName(fileName));
  }

  async writeThumbnail(fileName: string, image: Buffer): Promise<Buffer> {
    const thumbnail = await makeThumbnail(image);
    await writeAtomic(this.thumbnailPath(fileName), thumbnail);
    return thumbnail;
  }

  async readThumbnail(fileName: string): Promise<Buffer | null> {
    const stored = await readOrNull(this.thumbnailPath(fileName));
    if (stored) return stored;
    const image = await this.readImage(fileName);
    return image && this.writeThumbnail(fileName, image);
  }

  imagePath(fileName: string): string {
    return path.join(this.imagesDir, path.basename(fileName));
  }

  async image(fileName: string): Promise<StoredObject | null> {
    const file = this.imagePath(fileName);
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      return null;
    }
    return {
      size: stat.size,
      lastModified: stat.mtime,
      open: async (range) => fs.createReadStream(file, range && { start: range.start, end: range.end }),
    };
  }

  readImage(fileName: string): Promise<Buffer | null> {
    return readOrNull(this.imagePath(fileName));
  }

  sourcePath(jobId: string): string {
    return path.join(this.sourcesDir, `${path.basename(jobId)}.html`);
  }

  writeImage(fileName: string, data: Buffer): Promise<void> {
    return writeAtomic(this.imagePath(fileName), data);
  }

  async removeImage(fileName: string): Promise<void> {
    await fs.promises.rm(this.imagePath(fileName), { force: true });
    await fs.promises.rm(this.thumbnailPath(fileName), { force: true });
  }

  writeSource(jobId: string, html: string): Promise<void> {
    return writeAtomic(this.sourcePath(jobId), html);
  }

  async readSource(jobId: string): Promise<string | null> {
    return (await readOrNull(this.sourcePath(jobId)))?.toString('utf8') ?? null;
  }

  /** Where an extracted output of a job is kept, next to its page source. */
  outputPath(jobId: string, output: StoredOutput): string {
    return path.join(this.sourcesDir, `${path.basename(jobId)}.${OUTPUT_EXTENSIONS[output]}`);
  }

  writeOutput(jobId: string, output: StoredOutput, content: string): Promise<void> {
    return writeAtomic(this.outputPath(jobId, output), content);
  }

  async readOutput(jobId: string, output: StoredOutput): Promise<string | null> {
    return (await readOrNull(this.outputPath(jobId, output)))?.toString('utf8') ?? null;
  }

  async remove(fileName: string | undefined, jobId: string): Promise<void> {
    if (fileName) {
      await fs.promises.rm(this.imagePath(fileName), { force: true });
      await fs.promises.rm(this.imagePath(evidenceName(fileName)), { force: true });
      await fs.promises.rm(this.thumbnailPath(fileName), { force: true });
    }
    await fs.promises.rm(this.sourcePath(jobId), { force: true });
    for (const output of STORED_OUTPUTS) await fs.promises.rm(this.outputPath(jobId, output), { force: true });
  }

  async removeMany(jobs: readonly JobFiles[]): Promise<void> {
    for (const job of jobs) await this.remove(job.image, job.jobId);
  }

  async presignedImageUrl(): Promise<null> {
    return null;
  }

  markers(): MarkerPlace {
    return directoryMarkers(this.root);
  }

  async health(): Promise<FilesHealth> {
    return { where: this.root, parts: { files: await usable(this.imagesDir), sources: await usable(this.sourcesDir) } };
  }
}

async function readOrNull(file: string): Promise<Buffer | null> {
  try {
    return await fs.promises.readFile(file);
  } catch {
    return null;
  }
}

async function writeAtomic(file: string, data: Buffer | string): Promise<void> {
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  try {
    await fs.promises.writeFile(tmp, data, { mode: PRIVATE_FILE_MODE });
    await fs.promises.rename(tmp, file);
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
}

async function removeTemporaries(dir: string): Promise<void> {
  for (const name of await fs.promises.readdir(dir)) {
    if (name.endsWith('.tmp')) await fs.promises.rm(path.join(dir, name), { force: true });
  }
}

/**
 * Object storage refused an operation or did not answer (after the client's own retries).
 * A job failing with it says "Could not store the screenshot: <bucket> answered …"; nothing of
 * the write was kept, so it is retried like a full disk: the next job tries again.
 */
export class ObjectStorageError extends Error {
  override readonly name = 'ObjectStorageError';

  constructor(
    readonly bucket: string,
    /** What the storage answered, in a few words safe to show: `503 SlowDown`, `nothing (ECONNREFUSED)`. */
    readonly answer: string,
    cause?: unknown,
  ) {
    super(`${bucket} answered ${answer}`);
    this.cause = cause;
  }
}
