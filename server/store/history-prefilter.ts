import fs from 'node:fs/promises';

import { END_STATUSES } from '../jobs/job-record.js';
import type { Logger } from '../logger.js';
import { PRIVATE_FILE_MODE } from './data-dir.js';
import { isDiskFull } from './disk-full.js';

type Doc = Record<string, unknown>;

/** An index definition as NeDB writes it into its file (`$$indexCreated`). */
export interface IndexDefinition {
  fieldName: string;
  unique?: boolean;
  sparse?: boolean;
}

/** What a start found in jobs.db, and left of it. */
export interface PreparedJobs {
  /** Jobs left out of the file: they ended before the cutoff. */
  dropped: number;
  /** Those of them that still had files (not expired), for their files to be removed. */
  withFiles: Array<{ jobId: string; image: string | null }>;
  /**
   * The documents and index definitions the file now holds, as NeDB's load would read them, for
   * the load to take instead of reading the file again. Absent when the file has unreadable lines
   * or ends in the middle of one: the loader then reads it itself and reports them.
   */
  parsed?: { docs: Doc[]; indexes: Record<string, IndexDefinition> };
  /** The file holds one line per document and index and nothing else, so a load has nothing to fold. */
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

/** What a line of jobs.db does to the file written without the jobs left out. */
const enum Fate {
  /** Written as it is. */
  Keep,
  /** Left out: an ended job before the cutoff, seen first, or an empty line. */
  Drop,
  /** Changes what an earlier line is (a later line of a document or an index): the file must be folded. */
  Fold,
}

/**
 * Before jobs.db is loaded, leaves out every line of the jobs that ended before `cutoff` (their
 * records are past the history period), so the store never holds them: a year of history costs a
 * start what the history period holds, not the year. NeDB appends a document's every change as a
 * new line, so a job is judged by its last line.
 *
 * The file is read once, as bytes. A line that says it is an ended job created before the cutoff
 * is recognised from a few of its top-level fields without parsing it (most of a year's lines);
 * every other line is parsed, once, and the documents are handed to the loader (`parsed`), which
 * then neither reads the file again nor rewrites it. The lines kept are copied to the new file
 * as they are read; only a file with several lines for one document (changes since it was last
 * folded) is read a second time, to keep each document's last line alone, which is what NeDB's
 * load would fold it to. Unreadable lines stay for the loader to report. The file is replaced
 * whole (written beside it, then renamed); on any failure (a full disk) it is left as it is, with
 * nothing handed over, and the periodic sweep removes the jobs later.
 */
export async function prepareJobsFile(filename: string, cutoff: number, log: Logger): Promise<PreparedJobs> {
  const lines = new JobLines(cutoff);
  const copy = new LineCopy(filename);
  let fold = false;
  let endsMidLine = false;
  try {
    await eachLine(
      filename,
      (buf, start, end, offset, midLine) => {
        const fate = lines.judge(buf, start, end);
        endsMidLine = midLine;
        if (fold) return;
        if (fate === Fate.Fold) fold = true;
        else if (fate === Fate.Drop) copy.leaveOut(offset);
        // The last line, which has no newline, is written with one: not as the old file has it.
        else copy.add(withNewline(buf, start, end, midLine), offset, midLine);
      },
      () => (fold ? copy.abandon() : copy.flush()),
    );
    if (fold) await copy.write(lines.keep());
    await copy.finish();
  } catch (err) {
    await copy.abandon();
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && lines.count === 0) return { dropped: 0, withFiles: [], parsed: { docs: [], indexes: {} }, compact: true };
    if (!isDiskFull(err)) throw err;
    log.warn(`the disk is full; the job(s) past the history period stay in ${filename} until the next sweep`);
    return { dropped: 0, withFiles: [], compact: false };
  }
  const { dropped, withFiles } = lines.leftOut();
  if (dropped > 0) log.info(`left ${dropped} job(s) past the history period out of ${filename}`);
  const parsed = lines.parsed();
  // Unchanged, a file that ends mid-line still does: the loader's guard must know.
  return { dropped, withFiles, parsed: endsMidLine && !copy.changed ? undefined : parsed, compact: parsed !== undefined };
}

/** The judgement of jobs.db's lines, in order. */
class JobLines {
  /** Lines judged so far. */
  count = 0;
  /** Each document's last line: its number × 2, + 1 when that line is of an ended job before the cutoff. */
  private readonly last = new Map<string, number>();
  /** The documents whose last line is kept, parsed. */
  private readonly docs = new Map<string, Doc>();
  /** Jobs left out that still have their files: their image. */
  private readonly files = new Map<string, string | null>();
  /** Each index's last definition line, and the definition (null once removed). */
  private readonly indexes = new Map<string, { line: number; definition: IndexDefinition | null }>();
  /** Lines kept whatever the rest says: unreadable ones, and documents NeDB ignores. */
  private readonly verbatim: number[] = [];
  private corrupt = 0;
  private unusual = false;
  private readonly old: OldLine = { id: '', image: null, hasFiles: false };

  constructor(private readonly cutoff: number) {}

  judge(buf: Buffer, start: number, end: number): Fate {
    const line = this.count++;
    if (end === start) return Fate.Drop;
    const { old } = this;
    if (scanOldLine(buf, start, end, this.cutoff, old)) return this.set(old.id, line, true, null, old.hasFiles ? old.image : undefined);
    const doc = parse(buf.toString('utf8', start, end));
    if (doc === null) {
      this.corrupt++;
      this.verbatim.push(line);
      return Fate.Keep;
    }
    const id = doc._id;
    if (typeof id !== 'string' || id === '') return this.other(doc, line);
    if (doc.$$deleted === true) {
      this.last.delete(id);
      this.docs.delete(id);
      this.files.delete(id);
      return Fate.Fold;
    }
    const ended = typeof doc.created_at === 'number' && doc.created_at < this.cutoff && ENDED.has(String(doc.status));
    const image = ended && doc.expired !== true ? (typeof doc.image_file === 'string' ? doc.image_file : null) : undefined;
    return this.set(id, line, ended, ended ? null : doc, image);
  }

  /** Records a document's line: `doc` when kept, `image` when left out with its files (null: it has none). */
  private set(id: string, line: number, ended: boolean, doc: Doc | null, image: string | null | undefined): Fate {
    const { last, docs, files } = this;
    // One lookup: the map grows unless the document had a line before.
    const size = last.size;
    last.set(id, line * 2 + (ended ? 1 : 0));
    const seen = last.size === size;
    if (doc) docs.set(id, doc);
    else if (docs.size > 0) docs.delete(id);
    if (image !== undefined) files.set(id, image);
    else if (files.size > 0) files.delete(id);
    return seen ? Fate.Fold : ended ? Fate.Drop : Fate.Keep;
  }

  /** A line without a string `_id`: an index definition, or a document NeDB ignores (or, with another `_id`, one left to it). */
  private other(doc: Doc, line: number): Fate {
    const created = doc.$$indexCreated as IndexDefinition | undefined;
    const field = doc._id ? undefined : created && created.fieldName != null ? String(created.fieldName) : typeof doc.$$indexRemoved === 'string' ? doc.$$indexRemoved : undefined;
    if (field === undefined) {
      if (doc._id) this.unusual = true;
      this.verbatim.push(line);
      return Fate.Keep;
    }
    const seen = this.indexes.has(field);
    this.indexes.set(field, { line, definition: doc.$$indexCreated ? created! : null });
    return seen ? Fate.Fold : Fate.Keep;
  }

  /** Which lines the folded file keeps: the last of each document not left out, each index still defined, and the verbatim ones. */
  keep(): Uint8Array {
    const keep = new Uint8Array(this.count);
    for (const value of this.last.values()) if (value % 2 === 0) keep[value / 2] = 1;
    for (const { line, definition } of this.indexes.values()) if (definition) keep[line] = 1;
    for (const line of this.verbatim) keep[line] = 1;
    return keep;
  }

  leftOut(): { dropped: number; withFiles: Array<{ jobId: string; image: string | null }> } {
    let dropped = 0;
    for (const value of this.last.values()) dropped += value % 2;
    return { dropped, withFiles: [...this.files].map(([jobId, image]) => ({ jobId, image })) };
  }

  /** The documents and indexes as NeDB's load reads them, unless a line is unreadable or unusual. */
  parsed(): PreparedJobs['parsed'] {
    if (this.corrupt > 0 || this.unusual) return undefined;
    const indexes: Record<string, IndexDefinition> = {};
    for (const [field, { definition }] of this.indexes) if (definition) indexes[field] = definition;
    return { docs: [...this.docs.values()], indexes };
  }
}

/**
 * The new jobs.db, written beside the old one (`<file>~history`) and renamed over it once whole.
 * Nothing is written while every line is kept: the file is begun at the first line left out,
 * with the old file's bytes before it.
 */
class LineCopy {
  private readonly temporary: string;
  private out: fs.FileHandle | undefined;
  /** Bytes of the old file the new one begins with; -1 while nothing has been left out. */
  private prefix = -1;
  private pending: Buffer[] = [];

  constructor(private readonly filename: string) {
    this.temporary = `${filename}~history`;
  }

  get changed(): boolean {
    return this.prefix >= 0;
  }

  /** Leaves out the line at `offset` of the old file. */
  leaveOut(offset: number): void {
    if (this.prefix < 0) this.prefix = offset;
  }

  /**
   * Adds a kept line (valid until the next flush) found at `offset`; `altered`: it is not as the
   * old file has it. Lines before the first change are not copied but taken from the old file.
   */
  add(line: Buffer, offset: number, altered = false): void {
    if (this.prefix < 0 && !altered) return;
    if (this.prefix < 0) this.prefix = offset;
    this.pending.push(line);
  }

  async flush(): Promise<void> {
    if (this.prefix < 0) return;
    if (!this.out) {
      this.out = await fs.open(this.temporary, 'w', PRIVATE_FILE_MODE);
      await copyStart(this.filename, this.out, this.prefix);
    }
    if (this.pending.length) await this.out.write(Buffer.concat(this.pending));
    this.pending = [];
  }

  /** Writes the new file from the old one's lines marked in `keep`, instead of what was copied so far. */
  async write(keep: Uint8Array): Promise<void> {
    await this.abandon();
    this.prefix = 0;
    let line = 0;
    await eachLine(
      this.filename,
      (buf, start, end, _offset, midLine) => {
        if (keep[line++]) this.pending.push(withNewline(buf, start, end, midLine));
      },
      () => this.flush(),
    );
  }

  /** Renames the new file over the old one, when there is one. */
  async finish(): Promise<void> {
    await this.flush();
    if (!this.out) return;
    await this.out.sync();
    await this.out.close();
    this.out = undefined;
    await fs.rename(this.temporary, this.filename);
  }

  /** Removes what was written so far. */
  async abandon(): Promise<void> {
    this.pending = [];
    const out = this.out;
    this.out = undefined;
    this.prefix = -1;
    if (out) await out.close().catch(() => undefined);
    await fs.rm(this.temporary, { force: true }).catch(() => undefined);
  }
}

/** A line of eachLine's with its newline: the file's own, or a new one after a line the file stops in. */
function withNewline(buf: Buffer, start: number, end: number, midLine: boolean): Buffer {
  return midLine ? Buffer.concat([buf.subarray(start, end), Buffer.of(NEWLINE)]) : buf.subarray(start, end + 1);
}

/** Writes the first `bytes` of `filename` to `out`. */
async function copyStart(filename: string, out: fs.FileHandle, bytes: number): Promise<void> {
  if (bytes === 0) return;
  const input = await fs.open(filename, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, bytes));
    for (let at = 0; at < bytes; ) {
      const { bytesRead } = await input.read(buf, 0, Math.min(buf.length, bytes - at), at);
      if (bytesRead === 0) throw new Error(`${filename} is shorter than it was`);
      await out.write(buf, 0, bytesRead);
      at += bytesRead;
    }
  } finally {
    await input.close();
  }
}

/**
 * Calls `onLine` with each line of the file: a buffer, the range of the line in it without its
 * newline, where the line starts in the file, and whether it is the end of a line the file stops
 * in the middle of. The buffer is reused: what `onLine` keeps of it is valid until `afterChunk`,
 * which is awaited before more of the file is read.
 */
async function eachLine(
  filename: string,
  onLine: (buf: Buffer, start: number, end: number, offset: number, midLine: boolean) => void,
  afterChunk: () => Promise<void>,
): Promise<void> {
  const input = await fs.open(filename, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    /** Bytes at the start of buf carried over from the last read: the beginning of a line. */
    let carried = 0;
    /** Where buf starts in the file. */
    let base = 0;
    for (;;) {
      if (carried === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
      const { bytesRead } = await input.read(buf, carried, buf.length - carried, null);
      if (bytesRead === 0) break;
      const filled = carried + bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, carried); nl !== -1 && nl < filled; nl = buf.indexOf(NEWLINE, start)) {
        onLine(buf, start, nl, base + start, false);
        start = nl + 1;
      }
      await afterChunk();
      buf.copyWithin(0, start, filled);
      carried = filled - start;
      base += start;
    }
    // The end of a line NeDB was writing when it stopped.
    if (carried > 0) {
      onLine(buf, 0, carried, base, true);
      await afterChunk();
    }
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
