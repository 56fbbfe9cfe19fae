import fs from 'node:fs/promises';

import { END_STATUSES } from '../../jobs/job-record.js';
import type { Logger } from '../../logger.js';

type Doc = Record<string, unknown>;

/** An index definition as NeDB writes it into its file (`$$indexCreated`). */
export interface IndexDefinition {
  fieldName: string;
  unique?: boolean;
  sparse?: boolean;
}

/** What a start found in jobs.db: the documents to load, and the jobs left out of them. */
export interface PreparedJobs {
  /** Jobs left out of the documents: they ended before the cutoff. Their lines are still in the file. */
  dropped: number;
  /** Those of them that still had files (not expired), for their files to be removed. */
  withFiles: Array<{ jobId: string; image: string | null }>;
  /**
   * The documents and index definitions the file holds, less the jobs left out, as NeDB's load
   * would read them, for the load to take instead of reading the file again. Absent when the
   * file has a line NeDB reads in its own way (a document with an `_id` that is not a string):
   * the loader then reads it itself.
   */
  parsed?: { docs: Doc[]; indexes: Record<string, IndexDefinition> };
  /** Lines that are not JSON objects (a write cut short), skipped. */
  corrupt: number;
  /** The file ends in the middle of a line. */
  endsMidLine: boolean;
  /** The file holds one line per document and index and nothing else: folding it would leave it as it is. */
  compact: boolean;
}

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;
const CHUNK = 1 << 20;

const ENDED = new Set<string>(END_STATUSES);
const key = (name: string) => Buffer.from(name, 'latin1');
const KEY_ID = key('_id');
const KEY_STATUS = key('status');
const KEY_CREATED = key('created_at');
const KEY_EXPIRED = key('expired');
const KEY_IMAGE = key('image_file');
const KEY_DELETED = key('$$deleted');
const COMPLETED = key('completed');
const FAILED = key('failed');
const TRUE = key('true');

/** An ended job's line read by scanOldLine. */
interface OldLine {
  id: string;
  image: string | null;
  hasFiles: boolean;
}

/** What a line of jobs.db does to the file folded without the jobs left out. */
const enum Fate {
  /** Stays as it is. */
  Keep,
  /** Goes: an ended job before the cutoff, seen first, or an empty line. */
  Drop,
  /** Changes what an earlier line is (a later line of a document or an index). */
  Fold,
}

/**
 * Reads jobs.db before it is loaded and leaves out of its documents every job that ended before
 * `cutoff` (its record is past the history period), so the store never holds them: a year of
 * history costs a start what the history period holds, not the year. NeDB appends a document's
 * every change as a new line, so a job is judged by its last line.
 *
 * The file is read once, as bytes, and not written: a line that says it is an ended job created
 * before the cutoff is recognised from a few of its top-level fields without parsing it (most of
 * a year's lines); every other line is parsed, once, and the documents are handed to the loader
 * (`parsed`), which neither reads the file again nor rewrites it. The lines of the jobs left out
 * stay in the file, and their images and page sources on disk, until the retention sweep
 * removes the files and then folds the file (`LeftOutJobs`): the start does only the reading,
 * and a stop or a crash before the sweep leaves them for the next start to find again.
 */
export async function prepareJobsFile(filename: string, cutoff: number, log: Logger): Promise<PreparedJobs> {
  const lines = new JobLines(cutoff);
  let compact = true;
  let endsMidLine = false;
  try {
    await eachLine(filename, (buf, start, end, midLine) => {
      if (lines.judge(buf, start, end) !== Fate.Keep) compact = false;
      endsMidLine = midLine;
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || lines.count > 0) throw err;
    return { dropped: 0, withFiles: [], parsed: { docs: [], indexes: {} }, corrupt: 0, endsMidLine: false, compact: true };
  }
  const parsed = lines.parsed();
  // A file the loader reads itself is loaded whole: the periodic sweep removes the old jobs then.
  const { dropped, withFiles } = parsed ? lines.leftOut() : { dropped: 0, withFiles: [] };
  if (dropped > 0) log.info(`left ${dropped} job(s) past the history period out of ${filename}; the sweep removes them from disk`);
  return { dropped, withFiles, parsed, corrupt: lines.corrupt, endsMidLine, compact: compact && lines.corrupt === 0 && !endsMidLine };
}

/** The judgement of jobs.db's lines, in order. */
class JobLines {
  /** Lines judged so far. */
  count = 0;
  /** Each document seen: 1 when its last line is of an ended job before the cutoff, else 0. */
  private readonly last = new Map<string, number>();
  /** The documents whose last line is kept, parsed. */
  private readonly docs = new Map<string, Doc>();
  /** Jobs left out that still have their files: their image. */
  private readonly files = new Map<string, string | null>();
  /** Each index's last definition (null once removed). */
  private readonly indexes = new Map<string, IndexDefinition | null>();
  /** Lines that are not JSON objects. */
  corrupt = 0;
  private unusual = false;
  private readonly old: OldLine = { id: '', image: null, hasFiles: false };

  constructor(private readonly cutoff: number) {}

  judge(buf: Buffer, start: number, end: number): Fate {
    this.count++;
    if (end === start) return Fate.Drop;
    const { old } = this;
    if (scanOldLine(buf, start, end, this.cutoff, old)) return this.set(old.id, true, null, old.hasFiles ? old.image : undefined);
    const doc = parse(buf.toString('utf8', start, end));
    if (doc === null) {
      this.corrupt++;
      return Fate.Keep;
    }
    const id = doc._id;
    if (typeof id !== 'string' || id === '') return this.other(doc);
    if (doc.$$deleted === true) {
      this.last.delete(id);
      this.docs.delete(id);
      this.files.delete(id);
      return Fate.Fold;
    }
    const ended = typeof doc.created_at === 'number' && doc.created_at < this.cutoff && ENDED.has(String(doc.status));
    const image = ended && doc.expired !== true ? (typeof doc.image_file === 'string' ? doc.image_file : null) : undefined;
    return this.set(id, ended, ended ? null : doc, image);
  }

  /** Records a document's line: `doc` when kept, `image` when left out with its files (null: it has none). */
  private set(id: string, ended: boolean, doc: Doc | null, image: string | null | undefined): Fate {
    const { last, docs, files } = this;
    // One lookup: the map grows unless the document had a line before.
    const size = last.size;
    last.set(id, ended ? 1 : 0);
    const seen = last.size === size;
    if (doc) docs.set(id, doc);
    else if (docs.size > 0) docs.delete(id);
    if (image !== undefined) files.set(id, image);
    else if (files.size > 0) files.delete(id);
    return seen ? Fate.Fold : ended ? Fate.Drop : Fate.Keep;
  }

  /** A line without a string `_id`: an index definition, or a document NeDB ignores (or, with another `_id`, one left to it). */
  private other(doc: Doc): Fate {
    const created = doc.$$indexCreated as IndexDefinition | undefined;
    const field = doc._id ? undefined : created && created.fieldName != null ? String(created.fieldName) : typeof doc.$$indexRemoved === 'string' ? doc.$$indexRemoved : undefined;
    if (field === undefined) {
      if (doc._id) this.unusual = true;
      return Fate.Keep;
    }
    const seen = this.indexes.has(field);
    this.indexes.set(field, doc.$$indexCreated ? created! : null);
    return seen ? Fate.Fold : Fate.Keep;
  }

  leftOut(): { dropped: number; withFiles: Array<{ jobId: string; image: string | null }> } {
    let dropped = 0;
    for (const value of this.last.values()) dropped += value;
    return { dropped, withFiles: [...this.files].map(([jobId, image]) => ({ jobId, image })) };
  }

  /** The documents and indexes as NeDB's load reads them (unreadable lines skipped), unless a line is unusual. */
  parsed(): PreparedJobs['parsed'] {
    if (this.unusual) return undefined;
    const indexes: Record<string, IndexDefinition> = {};
    for (const [field, definition] of this.indexes) if (definition) indexes[field] = definition;
    return { docs: [...this.docs.values()], indexes };
  }
}

/**
 * Calls `onLine` with each line of the file: a buffer, the range of the line in it without its
 * newline, and whether it is the end of a line the file stops in the middle of. The buffer is
 * reused: what `onLine` keeps of it must be copied.
 */
async function eachLine(filename: string, onLine: (buf: Buffer, start: number, end: number, midLine: boolean) => void): Promise<void> {
  const input = await fs.open(filename, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    /** Bytes at the start of buf carried over from the last read: the beginning of a line. */
    let carried = 0;
    for (;;) {
      if (carried === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
      const { bytesRead } = await input.read(buf, carried, buf.length - carried, null);
      if (bytesRead === 0) break;
      const filled = carried + bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, carried); nl !== -1 && nl < filled; nl = buf.indexOf(NEWLINE, start)) {
        onLine(buf, start, nl, false);
        start = nl + 1;
      }
      buf.copyWithin(0, start, filled);
      carried = filled - start;
    }
    // The end of a line NeDB was writing when it stopped.
    if (carried > 0) onLine(buf, 0, carried, true);
  } finally {
    await input.close();
  }
}

/**
 * Reads a line as an ended job created before `cutoff` from its bytes alone: the top-level
 * `_id`, `status`, `created_at`, `expired` and `image_file`, found by following the nesting of
 * the JSON without building it. True only when it is sure (a well-nested object written as NeDB
 * writes it, plain strings and an integer time); anything else is left to JSON.parse.
 */
function scanOldLine(buf: Buffer, start: number, end: number, cutoff: number, out: OldLine): boolean {
  if (buf[start] !== OPEN_BRACE || buf[end - 1] !== CLOSE_BRACE) return false;
  let depth = 0;
  let idStart = -1;
  let idEnd = -1;
  let ended = false;
  let created = NaN;
  let expired = false;
  let imageStart = -1;
  let imageEnd = -1;
  let i = start;
  while (i < end) {
    const c = buf[i];
    if (c === QUOTE) {
      const from = ++i;
      let escaped = false;
      while (i < end) {
        const d = buf[i];
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          escaped = true;
          i += 2;
        } else {
          i++;
        }
      }
      if (i >= end) return false;
      const to = i++;
      if (depth !== 1 || buf[i] !== COLON) continue;
      // A key of the top-level object; its value starts after the colon.
      if (escaped) return false;
      const value = i + 1;
      if (is(buf, from, to, KEY_ID)) {
        const close = plainString(buf, value, end);
        if (close < 0) return false;
        idStart = value + 1;
        idEnd = close;
      } else if (is(buf, from, to, KEY_STATUS)) {
        const close = plainString(buf, value, end);
        if (close < 0) return false;
        ended = is(buf, value + 1, close, COMPLETED) || is(buf, value + 1, close, FAILED);
      } else if (is(buf, from, to, KEY_CREATED)) {
        created = integer(buf, value, end);
        if (Number.isNaN(created)) return false;
      } else if (is(buf, from, to, KEY_EXPIRED)) {
        expired = is(buf, value, Math.min(value + 4, end), TRUE) && (buf[value + 4] === COMMA || buf[value + 4] === CLOSE_BRACE);
      } else if (is(buf, from, to, KEY_IMAGE)) {
        if (buf[value] === QUOTE) {
          imageEnd = plainString(buf, value, end);
          if (imageEnd < 0) return false;
          imageStart = value + 1;
        } else {
          imageStart = imageEnd = -1;
        }
      } else if (is(buf, from, to, KEY_DELETED)) {
        return false;
      }
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0 && i !== end - 1) return false;
    i++;
  }
  if (depth !== 0 || idEnd <= idStart || !ended || !(created < cutoff)) return false;
  out.id = buf.toString('utf8', idStart, idEnd);
  out.hasFiles = !expired;
  out.image = out.hasFiles && imageStart >= 0 ? buf.toString('utf8', imageStart, imageEnd) : null;
  return true;
}

function is(buf: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (to - from !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (buf[from + i] !== bytes[i]) return false;
  return true;
}

/** The position of the closing quote of the string starting at `at`, or -1 when there is none or it has escapes. */
function plainString(buf: Buffer, at: number, end: number): number {
  if (buf[at] !== QUOTE) return -1;
  for (let i = at + 1; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

/** The non-negative integer starting at `at` and ending at a comma or brace; NaN for any other value. */
function integer(buf: Buffer, at: number, end: number): number {
  let n = 0;
  let i = at;
  for (; i < end; i++) {
    const c = buf[i];
    if (c < ZERO || c > NINE) break;
    n = n * 10 + (c - ZERO);
  }
  return i > at && i - at <= 15 && (buf[i] === COMMA || buf[i] === CLOSE_BRACE) ? n : NaN;
}

/** A line as NeDB reads it (its `$$date` values as dates), or null when it is not a JSON object. */
function parse(line: string): Doc | null {
  try {
    const doc = (line.includes('"$$date"') ? JSON.parse(line, revive) : JSON.parse(line)) as unknown;
    return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Doc) : null;
  } catch {
    return null;
  }
}

/** NeDB's own reviver (model.deserialize): `{"$$date": ms}` is a Date. */
function revive(this: unknown, k: string, v: unknown): unknown {
  if (k === '$$date') return new Date(v as number);
  if (v !== null && typeof v === 'object' && (v as { $$date?: unknown }).$$date) return (v as { $$date: unknown }).$$date;
  return v;
}
