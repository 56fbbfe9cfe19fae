import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { PRIVATE_FILE_MODE } from './data-dir.js';
import type { SharedValues } from './stores.js';

/** The shared value naming the marker the cluster's first node wrote into its files location. */
export const SHARED_FILES_MARKER = 'files_marker';

/** A files location as the marker check sees it: a directory (directoryMarkers), or a bucket's prefix (S3FileStore.markers). */
export interface MarkerPlace {
  /** The location, for the message: a path or an address without credentials. */
  readonly where: string;
  /** The marker's content, or null when there is none by that name. */
  read(name: string): Promise<string | null>;
  write(name: string, content: string): Promise<void>;
  remove(name: string): Promise<void>;
}

/** Thrown when a node of a cluster does not see the files the other nodes write. */
export class FilesNotSharedError extends Error {
  override readonly name = 'FilesNotSharedError';

  constructor(
    readonly where: string,
    readonly marker: string,
  ) {
    super(
      `this node does not share the cluster's files: ${where} lacks the marker ${marker} the cluster's first node wrote into its files location; ` +
        (where.startsWith('s3://')
          ? 'give every node the same --files s3://bucket/prefix (or SCREENSHOT_FILES_URL) and SCREENSHOT_S3_ENDPOINT'
          : 'set --files DIR (or SCREENSHOT_FILES_DIR) on every node to one directory on a mount they all share, or --files s3://bucket/prefix on every node'),
    );
  }
}

/** The markers of a files directory (--files, or the data directory): files in its top directory. */
export function directoryMarkers(dir: string): MarkerPlace {
  return {
    where: dir,
    async read(name) {
      try {
        return await fs.readFile(path.join(dir, name), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async write(name, content) {
      const file = path.join(dir, name);
      const temporary = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
      await fs.writeFile(temporary, content, { mode: PRIVATE_FILE_MODE });
      await fs.rename(temporary, file);
    },
    remove: (name) => fs.rm(path.join(dir, name), { force: true }),
  };
}

/**
 * Proves that this node sees the files the cluster's other nodes write, before it serves any of
 * them: without a shared location each node keeps its images to itself, and behind a load
 * balancer about half of all screenshot_urls would answer 404. The first node writes a marker of
 * a random name and content into its files location, then records both in the database; every
 * other node must find that marker, with that content, in its own. The marker is written before
 * it is recorded, so a node starting alongside the first never looks for one not yet there; a
 * node that loses that race removes its own. Throws FilesNotSharedError otherwise.
 */
export async function proveFilesShared(place: MarkerPlace, shared: SharedValues): Promise<void> {
  const own = { name: `.cluster-files-${crypto.randomBytes(8).toString('hex')}`, content: crypto.randomBytes(24).toString('base64url') };
  await place.write(own.name, own.content);
  const recorded = JSON.parse(await shared.getOrSet(SHARED_FILES_MARKER, JSON.stringify(own))) as typeof own;
  if (recorded.name === own.name) return;
  await place.remove(own.name);
  if ((await place.read(recorded.name)) !== recorded.content) throw new FilesNotSharedError(place.where, recorded.name);
}
