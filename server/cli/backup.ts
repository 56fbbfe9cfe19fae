import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../store/data-dir.js';
import { JOB_SECRETS_DIR } from '../store/nedb/job-secret-files.js';
import { MONITOR_SECRETS_DIR } from '../store/nedb/monitor-secret-files.js';
import { BATCH_ITEMS_FILE } from '../store/nedb/nedb-batch-store.js';
import { LOGIN_SECRETS_DIR } from '../store/nedb/nedb-login-store.js';
import { readTarGz, type TarEntry, writeTarGz } from './tar.js';

/** The archive's last entry: what it holds, with a checksum per file. */
const MANIFEST = 'backup.json';
const FORMAT = 'screenshot-appliance-backup/1';

/** The most a manifest may hold (one line per file: far more than any data directory needs); it is read whole. */
const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

/** Files of a data directory that belong to one run and are never archived. */
const RUNTIME_FILES = new Set(['.lock', 'server.json']);
/** Datafiles never archived: the sealed items of the batches still running (see UNARCHIVED_FOLDERS). */
const UNARCHIVED_DATASTORES = new Set([BATCH_ITEMS_FILE]);
/**
 * Folders never archived: the sealed secrets of jobs still waiting, of monitors and of saved
 * logins (their passwords and sessions). A backup
 * holds no secret, so none outlives its job or monitor in an archive; a waiting job restored
 * from one fails saying its secrets are not kept, and so does each check of a restored monitor
 * that had some, until they are given again.
 */
const UNARCHIVED_FOLDERS = new Set([JOB_SECRETS_DIR, MONITOR_SECRETS_DIR, LOGIN_SECRETS_DIR]);
/** Temporaries: a write in progress (`*.tmp`), NeDB's compaction (`*~`), kept copies of damaged files. */
const TRANSIENT = /(\.tmp|~)$|\.corrupt-\d+$/;

interface Manifest {
  format: string;
  created_at: string;
  files: Record<string, { bytes: number; sha256: string }>;
}

export interface BackupSummary {
  files: number;
  bytes: number;
  /** Unreadable datastore lines left out (a damaged line the server skips as well). */
  skippedLines: number;
  /**
   * Whether the data directory keeps the images (its `files/`): false when they live elsewhere
   * (--files DIR, or object storage), which the archive does not cover.
   */
  images: boolean;
}

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

const sha256 = (data: Buffer) => crypto.createHash('sha256').update(data).digest('hex');

/**
 * A datastore file as a consistent snapshot. NeDB appends whole lines and compacts by writing a
 * new file and renaming it, so a file read while the server writes is whole but for, at most,
 * an append in progress at its end: that part line is left out, as NeDB would on loading.
 */
function datastoreSnapshot(text: string): { data: Buffer; skipped: number } {
  const whole = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  let skipped = 0;
  const lines: string[] = [];
  for (const line of whole.split('\n')) {
    if (!line.trim()) continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    lines.push(withoutSealedSecrets(doc) ?? line);
  }
  return { data: Buffer.from(lines.map((l) => `${l}\n`).join('')), skipped };
}

/**
 * A job line of a data directory from before the secrets were kept apart (a server of an
 * earlier version still running) with its sealed secrets left out, or null for any other line.
 */
function withoutSealedSecrets(doc: unknown): string | null {
  if (typeof doc !== 'object' || doc === null || !('sealed_secrets' in doc)) return null;
  const { sealed_secrets: sealed, ...rest } = doc as Record<string, unknown>;
  return JSON.stringify(typeof sealed === 'string' ? { ...rest, has_secrets: true } : rest);
}

async function readIfThere(file: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    // Removed since it was listed (an expired image, a compaction's temporary).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Writes a gzip-compressed tar of the data directory to `out`, also while its server runs:
 * the datastores first (each a consistent snapshot, see datastoreSnapshot), then the images
 * and page sources, so every job the archive says is completed has its image, and last a
 * manifest with each file's SHA-256, which restore checks.
 */
export async function backupDataDir(dataDir: string, out: string): Promise<BackupSummary> {
  const root = path.resolve(dataDir);
  try {
    await fs.access(path.join(root, 'jobs.db'));
  } catch {
    throw new BackupError(`${root} is not a data directory of the service (it has no jobs.db)`);
  }
  const top = await fs.readdir(root, { withFileTypes: true });
  const usable = (name: string) => !RUNTIME_FILES.has(name) && !TRANSIENT.test(name);
  const datastores = top.filter((e) => e.isFile() && e.name.endsWith('.db') && usable(e.name) && !UNARCHIVED_DATASTORES.has(e.name)).map((e) => e.name).sort();
  const others = top.filter((e) => e.isFile() && !e.name.endsWith('.db') && usable(e.name)).map((e) => e.name).sort();
  const folders = top.filter((e) => e.isDirectory() && !UNARCHIVED_FOLDERS.has(e.name)).map((e) => e.name).sort();
  const manifest: Manifest = { format: FORMAT, created_at: new Date().toISOString(), files: {} };
  const summary: BackupSummary = { files: 0, bytes: 0, skippedLines: 0, images: folders.includes('files') };

  async function* entries(): AsyncGenerator<TarEntry> {
    const entry = (name: string, data: Buffer, mtime = new Date()): TarEntry => {
      manifest.files[name] = { bytes: data.length, sha256: sha256(data) };
      summary.files++;
      summary.bytes += data.length;
      return { name, data, mode: PRIVATE_FILE_MODE, mtime };
    };
    for (const name of datastores) {
      const raw = await readIfThere(path.join(root, name));
      if (!raw) continue;
      const { data, skipped } = datastoreSnapshot(raw.toString('utf8'));
      summary.skippedLines += skipped;
      yield entry(name, data);
    }
    for (const name of others) {
      const data = await readIfThere(path.join(root, name));
      if (data) yield entry(name, data);
    }
    for (const folder of folders) {
      const names = (await fs.readdir(path.join(root, folder), { withFileTypes: true })).filter((e) => e.isFile() && usable(e.name));
      for (const { name } of names.sort((a, b) => a.name.localeCompare(b.name))) {
        const file = path.join(root, folder, name);
        const data = await readIfThere(file);
        if (data) yield entry(`${folder}/${name}`, data, (await fs.stat(file).catch(() => null))?.mtime);
      }
    }
    yield { name: MANIFEST, data: Buffer.from(JSON.stringify(manifest, null, 2)), mode: PRIVATE_FILE_MODE, mtime: new Date() };
  }

  const partial = `${out}.partial-${process.pid}`;
  try {
    await writeTarGz(partial, entries());
    await fs.rename(partial, out);
  } catch (err) {
    await fs.rm(partial, { force: true });
    throw err;
  }
  return summary;
}

/** A name from an archive that stays inside the directory: `file` or `folder/file`, nothing else. */
function safeName(name: string): boolean {
  const parts = name.split('/');
  return parts.length <= 2 && parts.every((p) => p !== '' && p !== '.' && p !== '..' && !p.includes('\\'));
}

/**
 * Restores an archive of backupDataDir into `dataDir`, which must be missing or empty. Each
 * file is checked against the manifest; on any mismatch nothing is left behind.
 */
export async function restoreDataDir(archive: string, dataDir: string): Promise<{ files: number; bytes: number }> {
  const root = path.resolve(dataDir);
  try {
    const present = await fs.readdir(root);
    if (present.length > 0) throw new BackupError(`${root} is not empty; restore only into a new or empty directory`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
  await fs.chmod(root, PRIVATE_DIR_MODE);
  const written = new Map<string, { bytes: number; sha256: string }>();
  let manifest: Manifest | undefined;
  try {
    for await (const entry of readTarGz(archive)) {
      if (entry.name === MANIFEST) {
        manifest = JSON.parse((await entry.read(MANIFEST_MAX_BYTES)).toString('utf8')) as Manifest;
        continue;
      }
      if (!safeName(entry.name) || RUNTIME_FILES.has(entry.name)) throw new BackupError(`the archive holds an unexpected file: ${entry.name}`);
      const target = path.join(root, ...entry.name.split('/'));
      await fs.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      // Streamed to the file as it is decompressed, hashed on the way: memory stays at a chunk or two.
      const hash = crypto.createHash('sha256');
      let bytes = 0;
      const counted = async function* () {
        for await (const chunk of entry.chunks()) {
          hash.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      };
      await pipeline(counted(), createWriteStream(target, { mode: PRIVATE_FILE_MODE, flags: 'wx' }));
      await fs.utimes(target, entry.mtime, entry.mtime).catch(() => undefined);
      written.set(entry.name, { bytes, sha256: hash.digest('hex') });
    }
    if (manifest?.format !== FORMAT) throw new BackupError(`${archive} is not a backup of this service (no ${MANIFEST} of format ${FORMAT})`);
    for (const [name, expected] of Object.entries(manifest.files)) {
      const got = written.get(name);
      if (!got) throw new BackupError(`${name} is missing from the archive`);
      if (got.sha256 !== expected.sha256 || got.bytes !== expected.bytes) throw new BackupError(`${name} does not match its checksum`);
    }
    for (const name of written.keys()) {
      if (!(name in manifest.files)) throw new BackupError(`${name} is in the archive but not in its manifest`);
    }
  } catch (err) {
    for (const name of await fs.readdir(root)) await fs.rm(path.join(root, name), { recursive: true, force: true });
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${archive} could not be restored: ${(err as Error).message}`);
  }
  let bytes = 0;
  for (const f of written.values()) bytes += f.bytes;
  return { files: written.size, bytes };
}
