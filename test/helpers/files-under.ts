import fs from 'node:fs/promises';
import path from 'node:path';

/** Every file under `dir`, recursively. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

/** Every file under `dir` holding `needle` (a file gone before it is read holds nothing). */
export async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await filesUnder(dir)) {
    const data = await fs.readFile(file).catch(() => Buffer.alloc(0));
    if (data.includes(needle)) found.push(file);
  }
  return found;
}
