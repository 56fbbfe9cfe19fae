import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import readline from 'node:readline';

import type { Logger } from '../logger.js';
import { PRIVATE_FILE_MODE } from './data-dir.js';
import { isDiskFull } from './disk-full.js';

/** What a job's last line in jobs.db says of it, as far as the history period cares. */
interface LastState {
  old: boolean;
  /** Its image, when the job still has its files (not expired). */
  image: string | null;
  hasFiles: boolean;
}

const ENDED = new Set(['completed', 'failed']);

async function* lines(filename: string): AsyncGenerator<string> {
  const input = createReadStream(filename, { encoding: 'utf8' });
  try {
    yield* readline.createInterface({ input, crlfDelay: Infinity });
  } finally {
    input.destroy();
  }
}

/**
 * Before jobs.db is loaded, drops every line of the jobs that ended before `cutoff` (their
 * records are past the history period), so the store never holds them in memory: a year of
 * history costs a start what the history period holds, not the year. NeDB appends a document's
 * every change as a new line, so a job is judged by its last line, and all its lines go or stay
 * together. Unreadable lines stay for the loader to report. The file is replaced whole (written
 * beside it, then renamed); on any failure (a full disk) it is left as it is and the periodic
 * sweep removes the jobs later. Returns the jobs dropped that still had files, for their files
 * to be removed.
 */
export async function dropJobsBefore(
  filename: string,
  cutoff: number,
  log: Logger,
): Promise<{ dropped: number; withFiles: Array<{ jobId: string; image: string | null }> }> {
  const last = new Map<string, LastState>();
  /** The `_id` of each line (undefined for one without), so the second pass parses nothing. */
  const lineIds: Array<string | undefined> = [];
  try {
    for await (const line of lines(filename)) {
      const doc = parse(line);
      lineIds.push(doc && typeof doc._id === 'string' ? doc._id : undefined);
      if (!doc || typeof doc._id !== 'string') continue;
      if (doc.$$deleted === true) {
        last.delete(doc._id);
        continue;
      }
      const old = typeof doc.created_at === 'number' && doc.created_at < cutoff && ENDED.has(String(doc.status));
      last.set(doc._id, { old, image: typeof doc.image_file === 'string' ? doc.image_file : null, hasFiles: doc.expired !== true });
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { dropped: 0, withFiles: [] };
    throw err;
  }
  const drop = new Set([...last].filter(([, state]) => state.old).map(([id]) => id));
  if (drop.size === 0) return { dropped: 0, withFiles: [] };

  const temporary = `${filename}~history`;
  try {
    const out = await fs.open(temporary, 'w', PRIVATE_FILE_MODE);
    try {
      let chunk = '';
      let index = 0;
      for await (const line of lines(filename)) {
        const id = lineIds[index++];
        if (id !== undefined && drop.has(id)) continue;
        chunk += `${line}\n`;
        if (chunk.length > 1 << 20) {
          await out.write(chunk);
          chunk = '';
        }
      }
      await out.write(chunk);
      await out.sync();
    } finally {
      await out.close();
    }
    await fs.rename(temporary, filename);
  } catch (err) {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    if (!isDiskFull(err)) throw err;
    log.warn(`the disk is full; the ${drop.size} job(s) past the history period stay in ${filename} until the next sweep`);
    return { dropped: 0, withFiles: [] };
  }
  const withFiles = [...drop].flatMap((jobId) => {
    const state = last.get(jobId)!;
    return state.hasFiles ? [{ jobId, image: state.image }] : [];
  });
  log.info(`left ${drop.size} job(s) past the history period out of ${filename}`);
  return { dropped: drop.size, withFiles };
}

function parse(line: string): Record<string, unknown> | null {
  try {
    const doc = JSON.parse(line) as unknown;
    return doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
