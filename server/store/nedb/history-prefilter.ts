import type { Logger } from '../../logger.js';
import { eachLine } from './datafile-lines.js';
import { JobLines } from './job-lines.js';
import type { DatafileContents } from './nedb-file.js';

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
  parsed?: DatafileContents;
  /** Lines that are not JSON objects (a write cut short), skipped. */
  corrupt: number;
  /** The file ends in the middle of a line. */
  endsMidLine: boolean;
  /** The file holds one line per document and index and nothing else: folding it would leave it as it is. */
  compact: boolean;
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
  let endsMidLine = false;
  try {
    await eachLine(filename, (buf, start, end, midLine) => {
      lines.judge(buf, start, end);
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
  return { dropped, withFiles, parsed, corrupt: lines.corrupt, endsMidLine, compact: lines.unchanged && lines.corrupt === 0 && !endsMidLine };
}
