import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';

import type { Logger } from '../../logger.js';
import { PRIVATE_FILE_MODE } from '../data-dir.js';
import { DiskFullError, isDiskFull } from '../disk-full.js';
import type { DatafileContents, IndexDefinition, NedbFile } from './nedb-file.js';
import { foldDatafile, type FoldSource } from './nedb-fold.js';

type Doc = Record<string, unknown>;

/**
 * A datafile is folded once it has grown past this many times the size it had after its last
 * fold (or load): NeDB appends a whole document's line at every change, so a document changed
 * often (a monitor's claims, a PATCH) grows its file without end until a fold. Folding costs
 * about the live size and waits for this much growth, so it costs at most a fraction of what
 * was appended.
 */
export const FOLD_GROWTH = 4;
/** No datafile is folded for its growth while it is smaller than this. */
export const FOLD_FLOOR_BYTES = 1 << 20;

/** The parts of @seald-io/nedb 4's Datastore (behind nedb-promises) this module reaches into. */
interface NedbDatastore {
  persistence: {
    persistNewStateAsync(docs: Doc[]): Promise<void>;
    persistCachedDatabaseAsync(): Promise<void>;
    treatRawStreamAsync(stream: NodeJS.ReadableStream): Promise<{ data: Doc[]; indexes: Record<string, IndexDefinition> }>;
  };
  indexes: Record<string, unknown>;
  _resetIndexes(docs?: Doc[]): void;
  compactDatafileAsync(): Promise<void>;
}

export interface DatafileGuardOptions {
  filename: string;
  /** The file ends in the middle of a line (a write cut short before this start). */
  endsMidLine: boolean;
  /** Whether the file may be rewritten (compacted); false leaves damaged lines in place for a later start to copy. */
  rewrite: boolean;
  /**
   * The file's documents and index definitions, read already (history-prefilter): the load takes
   * them instead of reading and parsing the file a second time.
   */
  parsed?: DatafileContents;
  /** The load does not write the file again: it holds nothing to fold, or folding it is left for later. */
  compact?: boolean;
  log: Logger;
}

/**
 * Loads a datastore and makes every later append to its file all or nothing.
 *
 * NeDB changes its documents in memory first and appends to the file after. When the append
 * fails (a full disk) the two disagree: the client is told the write failed while memory, and
 * any part of the line that reached the file, say otherwise; and a half line swallows the next
 * append. So a failed append is cut off the file again and the documents are reloaded from the
 * file: memory, the file and what a restart loads stay the same, and the caller gets a
 * DiskFullError. A full disk while loading does not stop the start: the file is used as it is.
 *
 * It also folds the file once it has grown FOLD_GROWTH times past its size after the last fold,
 * in NeDB's executor right after the write that passed it. A file loaded from what a prefilter
 * read (`parsed`: jobs.db, whose lines of jobs left out must stay until their files are gone) is
 * folded for its growth only after its first fold asked for from outside.
 */
export async function loadGuarded(store: NedbFile<{ _id: string }>, options: DatafileGuardOptions): Promise<void> {
  const { filename, log } = options;
  // Datastore.create's proxy hands out the underlying datastore's members (nedb-promises' documented way to reach `persistence`).
  const db = store as unknown as NedbDatastore;
  const { persistence } = db;
  const append = persistence.persistNewStateAsync.bind(persistence);
  // A fold a megabyte at a time, instead of NeDB's, which holds the whole file's lines at once.
  const compact = () => foldDatafile(db as unknown as FoldSource, filename, PRIVATE_FILE_MODE);
  const readFile = persistence.treatRawStreamAsync.bind(persistence);
  let endsMidLine = options.endsMidLine;
  let loading = true;
  /** The file's size after its last fold (or load), and whether its growth may fold it. */
  let folded = 0;
  let foldsForGrowth = options.rewrite && !options.parsed;
  let foldQueued = false;

  const foldIfGrown = (size: number) => {
    if (!foldsForGrowth || foldQueued || size < FOLD_FLOOR_BYTES || size <= FOLD_GROWTH * folded) return;
    foldQueued = true;
    // Queued in NeDB's executor behind the write under way, never interleaved with another.
    db.compactDatafileAsync()
      .catch((err: unknown) => log.warn({ err }, `could not fold ${filename}; the next write past its size tries again`))
      .finally(() => {
        foldQueued = false;
      });
  };

  const undo = async (size: number) => {
    try {
      await fs.truncate(filename, size);
    } catch (err) {
      endsMidLine = true;
      log.warn({ err }, `could not cut a failed write off ${filename}`);
    }
    try {
      const { data } = await readFile(createReadStream(filename, { encoding: 'utf8' }));
      db._resetIndexes(data);
    } catch (err) {
      log.warn({ err }, `could not reload ${filename} after a failed write`);
    }
  };

  // NeDB calls both methods inside its executor, one at a time per datastore.
  persistence.persistNewStateAsync = async (docs) => {
    const { size } = await fs.stat(filename);
    const midLine = endsMidLine;
    try {
      if (midLine) await fs.appendFile(filename, '\n');
      endsMidLine = false;
      await append(docs);
      foldIfGrown(size);
    } catch (err) {
      endsMidLine = midLine;
      await undo(size);
      // Index definitions are written again at every start, and the index is built in memory.
      if (docs.every((doc) => '$$indexCreated' in doc || '$$indexRemoved' in doc)) return;
      throw isDiskFull(err) ? new DiskFullError(err) : err;
    }
  };

  const { parsed } = options;
  if (parsed) {
    // NeDB's load opens the file and hands the stream over to be read; what it holds is known already.
    persistence.treatRawStreamAsync = async (stream) => {
      persistence.treatRawStreamAsync = readFile;
      (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
      return { data: parsed.docs, indexes: parsed.indexes };
    };
  }

  persistence.persistCachedDatabaseAsync = async () => {
    if (!options.rewrite || (loading && options.compact)) return;
    try {
      await compact();
      endsMidLine = false;
      folded = (await fs.stat(filename)).size;
      foldsForGrowth = true;
    } catch (err) {
      // The new file is written beside the old one (`<file>~`) and renamed over it only when whole.
      await fs.rm(`${filename}~`, { force: true }).catch(() => undefined);
      if (loading && isDiskFull(err)) {
        log.warn(`the disk is full; ${filename} is used without compacting it`);
        return;
      }
      throw isDiskFull(err) ? new DiskFullError(err) : err;
    }
  };

  try {
    await store.load();
  } finally {
    loading = false;
  }
  folded = await fs.stat(filename).then(
    (stat) => stat.size,
    () => 0,
  );
}

/** The fields a datastore keeps an index on (besides `_id`), as loaded from its file or ensured since. */
export function indexedFields(store: NedbFile<{ _id: string }>): string[] {
  return Object.keys((store as unknown as NedbDatastore).indexes).filter((field) => field !== '_id');
}
