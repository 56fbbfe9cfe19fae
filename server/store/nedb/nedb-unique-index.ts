import type { NedbFile } from './nedb-file.js';

/**
 * A unique index on `fieldName`; when the file already holds a value twice (edited by hand,
 * restored from two backups, or written before the index existed) a plain one instead, so the
 * store still opens, and `onRepeated` is called to say so.
 */
export async function uniqueIndexOrPlain<T extends { _id: string }>(db: NedbFile<T>, fieldName: string, onRepeated: () => Promise<void>): Promise<void> {
  try {
    await db.ensureIndex({ fieldName, unique: true });
  } catch {
    await db.removeIndex(fieldName).catch(() => undefined);
    await db.ensureIndex({ fieldName });
    await onRepeated();
  }
}
