import type { Readable } from 'node:stream';

import { ZipFile } from 'yazl';

import type { Logger } from '../logger.js';
import type { FileStore } from '../store/file-store.js';
import type { BatchRecord } from '../store/records/batch-record.js';
import type { JobRecord } from '../store/records/job-record.js';

/** One item of a batch as manifest.json and manifest.csv describe it. */
export interface ManifestRow {
  index: number;
  url: string | null;
  job_id: string | null;
  /** The job's state; `not_run` for an item never fed to the queue (a cancelled batch). */
  status: JobRecord['status'] | 'not_run';
  /** The image's name in the archive, or null when it holds none for this item. */
  file: string | null;
  warnings: string[];
  error: string | null;
}

export interface BatchArchiveDeps {
  /** A job as its readers see it (JobService.find). */
  job: (id: string) => Promise<JobRecord | null>;
  files: FileStore;
  log: Logger;
}

/** Longest part of an entry's name taken from its URL, characters. */
const MAX_NAME_PART = 80;

/**
 * The name of item `index`'s image in the archive: its place (so names are unique and sort in
 * item order), then the URL's host and path with every character but letters, digits, `.`, `_`
 * and `-` made a `-`, so no name is a path, hidden, or anything but printable ASCII.
 */
export function entryName(index: number, url: string, imageFile: string): string {
  let part = 'html';
  if (!url.startsWith('about:')) {
    try {
      const u = new URL(url);
      part = `${u.host}${u.pathname}${u.search}`;
    } catch {
      part = 'page';
    }
  }
  const safe = part.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+/, '').slice(0, MAX_NAME_PART).replace(/[-.]+$/, '') || 'page';
  const dot = imageFile.lastIndexOf('.');
  const extension = dot > 0 ? imageFile.slice(dot + 1).replace(/[^a-z0-9]/g, '') : 'png';
  return `${String(index).padStart(4, '0')}-${safe}.${extension}`;
}

/**
 * A batch's archive as a ZIP, streamed as it is read: each completed image is opened only when
 * the archive reaches it and passes through (stored, not compressed again), so memory holds one
 * image's chunk at a time, never the archive. manifest.json and manifest.csv (item → job,
 * status, file, warnings, error) end it; an item not in the archive is listed there, which is how
 * a client resumes: it fetches the missing ones by job.
 */
export function batchArchive(batch: BatchRecord, deps: BatchArchiveDeps): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream as unknown as Readable;
  const rows: ManifestRow[] = [];
  const add = async () => {
    for (let index = 0; index < batch.total; index++) {
      const id = batch.jobs[index];
      const job = id === undefined ? null : await deps.job(id);
      const row: ManifestRow = {
        index,
        url: job?.url ?? null,
        job_id: job?._id ?? null,
        status: job?.status ?? 'not_run',
        file: null,
        warnings: (job?.warnings ?? []).map((w) => w.code),
        error: job?.error ?? null,
      };
      rows.push(row);
      if (!job || job.status !== 'completed' || !job.image_file || job.expired) continue;
      const stored = await deps.files.image(job.image_file);
      if (!stored) continue;
      row.file = entryName(index, job.url, job.image_file);
      zip.addReadStreamLazy(row.file, { mtime: new Date(job.completed_at ?? job.created_at), compress: false, size: stored.size }, (done) => {
        stored.open().then(
          (stream) => done(null, stream),
          (err: unknown) => done(err as Error, undefined as unknown as Readable),
        );
      });
    }
    const mtime = new Date(batch.ended_at ?? batch.created_at);
    zip.addBuffer(Buffer.from(`${JSON.stringify({ batch_id: batch._id, status: batch.status, total: batch.total, items: rows }, null, 2)}\n`), 'manifest.json', { mtime });
    zip.addBuffer(Buffer.from(manifestCsv(rows)), 'manifest.csv', { mtime });
    zip.end();
  };
  add().catch((err: unknown) => {
    deps.log.error({ component: 'batches', batch_id: batch._id, err }, "could not read a batch's jobs for its archive");
    output.destroy(err as Error);
  });
  return output;
}

const CSV_COLUMNS = ['index', 'url', 'job_id', 'status', 'file', 'warnings', 'error'] as const;

/** The manifest as CSV (RFC 4180): a header line, then a line per item; warnings joined by `;`. */
export function manifestCsv(rows: readonly ManifestRow[]): string {
  const cell = (value: unknown) => {
    const text = value === null ? '' : Array.isArray(value) ? value.join(';') : String(value);
    // A cell a spreadsheet would run as a formula is led by a quote mark.
    const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [CSV_COLUMNS.join(','), ...rows.map((row) => CSV_COLUMNS.map((c) => cell(row[c])).join(','))].join('\r\n') + '\r\n';
}
