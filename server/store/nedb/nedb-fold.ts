import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

// NeDB's own serialisation (dates as {"$$date": ms}), from the package nedb-promises wraps.
const { serialize } = createRequire(import.meta.url)('@seald-io/nedb/lib/model.js') as { serialize(doc: unknown): string };

/** Bytes of lines written at a time (writeFile: a short write of a full disk goes on until it fails). */
const CHUNK = 1 << 20;

/** The parts of @seald-io/nedb 4's Datastore a fold reads. */
export interface FoldSource {
  getAllData(): unknown[];
  indexes: Record<string, { fieldName: string; unique?: boolean; sparse?: boolean }>;
}

/**
 * Writes a datafile as NeDB's compaction does (each document's line, then each index's
 * definition; beside the file as `<file>~`, synced, renamed over it, the directory synced), but a
 * megabyte at a time: NeDB's own builds every line first and hands them all to a stream at once,
 * so folding the 100,000 jobs of a 90-day history held about 180 MB more (the lines, then the
 * stream's buffers) for the moment it ran, and the process kept most of it.
 */
export async function foldDatafile(db: FoldSource, filename: string, fileMode: number): Promise<void> {
  const temporary = `${filename}~`;
  const out = await fs.open(temporary, 'w', fileMode);
  try {
    let chunk = '';
    for (const doc of db.getAllData()) {
      chunk += `${serialize(doc)}\n`;
      if (chunk.length >= CHUNK) {
        await out.writeFile(chunk);
        chunk = '';
      }
    }
    for (const [field, index] of Object.entries(db.indexes)) {
      if (field !== '_id') chunk += `${serialize({ $$indexCreated: { fieldName: index.fieldName, unique: index.unique, sparse: index.sparse } })}\n`;
    }
    await out.writeFile(chunk);
    await out.sync();
  } finally {
    await out.close();
  }
  await fs.rename(temporary, filename);
  const dir = await fs.open(path.dirname(filename), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
