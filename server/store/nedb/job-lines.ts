import { type JobOptions, secretNames, splitJobOptions } from '../records/job-options.js';
import { END_STATUSES } from '../records/job-record.js';
import { type OldLine, scanOldLine } from './ended-job-scan.js';
import type { DatafileContents, IndexDefinition } from './nedb-file.js';

type Doc = Record<string, unknown>;

const ENDED = new Set<string>(END_STATUSES);

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
 * The judgement of jobs.db's lines, in order, against the history period's `cutoff`: which
 * documents are kept, which jobs are left out (and which of them still have files), and whether
 * the file would fold to itself.
 */
export class JobLines {
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
  /** Every line judged so far stays as it is: none goes or changes an earlier one. */
  unchanged = true;
  private unusual = false;
  private readonly old: OldLine = { id: '', image: null, hasFiles: false };

  constructor(private readonly cutoff: number) {}

  /** Judges the next line: its bytes are `buf` from `start` to `end`. */
  judge(buf: Buffer, start: number, end: number): void {
    if (this.fate(buf, start, end) !== Fate.Keep) this.unchanged = false;
  }

  private fate(buf: Buffer, start: number, end: number): Fate {
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
    if (!ended && ENDED.has(String(doc.status))) this.dropLargeOptions(doc);
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

  /**
   * An ended job of an earlier version kept every option in its record, and NeDB would hold them
   * in memory for the rest of the history period: the options too large for a record go
   * (splitJobOptions), named in its secret_names as those of newer jobs are, and the file is
   * folded without them at its next compaction.
   */
  private dropLargeOptions(doc: Doc): void {
    if (doc.options === null || typeof doc.options !== 'object') return;
    const { kept, apart } = splitJobOptions(doc.options as JobOptions);
    const options = secretNames(null, apart)?.options;
    if (!options) return;
    const names = typeof doc.secret_names === 'object' ? doc.secret_names : null;
    doc.options = kept;
    doc.secret_names = { headers: [], cookies: [], http_auth: false, ...names, options };
    this.unchanged = false;
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
  parsed(): DatafileContents | undefined {
    if (this.unusual) return undefined;
    const indexes: Record<string, IndexDefinition> = {};
    for (const [field, definition] of this.indexes) if (definition) indexes[field] = definition;
    return { docs: [...this.docs.values()], indexes };
  }
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
