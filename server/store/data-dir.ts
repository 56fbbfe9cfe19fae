import fs from 'node:fs';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

/** The data directory and its folders: only the service's own user may enter them. */
export const PRIVATE_DIR_MODE = 0o700;
/** Every file the service writes there (accounts.db holds webhook secrets). */
export const PRIVATE_FILE_MODE = 0o600;

/** The admin token's file, where the CLI's account and key commands read it. */
export const ADMIN_TOKEN_FILE = 'admin-token';
/** Cluster mode: the admin token's name among the values every node shares. */
export const SHARED_ADMIN_TOKEN = 'admin_token';
/** The key sealing job secrets and signing secrets (SecretBox): 0600, 32 random bytes, made at first use. */
export const SECRET_KEY_FILE = 'job-secrets.key';
/** Cluster mode: that key's name among the values every node shares (base64). */
export const SHARED_SECRET_KEY = 'job_secrets_key';

/** Writes `data` to `file` readable by this user only (0600), also over a file that had other permissions. */
export function writePrivateFile(file: string, data: string | Buffer): void {
  fs.writeFileSync(file, data, { mode: PRIVATE_FILE_MODE });
  fs.chmodSync(file, PRIVATE_FILE_MODE);
}

/**
 * Creates the data directory private to this user (0700), whatever the umask, and makes an
 * existing one private: the directory and its folders 0700, the files directly in it 0600.
 * Files deeper down (images, page sources) are left as they are: behind a 0700 folder no
 * other user can reach them, and new ones are written 0600.
 */
export function prepareDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  fs.chmodSync(dataDir, PRIVATE_DIR_MODE);
  for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
    const mode = entry.isDirectory() ? PRIVATE_DIR_MODE : entry.isFile() ? PRIVATE_FILE_MODE : undefined;
    if (mode !== undefined) fs.chmodSync(path.join(dataDir, entry.name), mode);
  }
}

/** `ok` when the service can read and write `target`, or why not (`missing`, `not writable`, an error code). */
export async function usable(target: string): Promise<string> {
  try {
    await access(target, constants.R_OK | constants.W_OK);
    return 'ok';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'missing' : code === 'EACCES' || code === 'EROFS' ? 'not writable' : code ?? String(err);
  }
}
