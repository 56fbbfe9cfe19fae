import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Time one certutil call may take. */
const CERTUTIL_TIMEOUT_MS = 15_000;

/** A home directory for Chromium whose NSS database trusts some authorities; dispose() removes it. */
export interface NssHome {
  home: string;
  dispose(): Promise<void>;
}

/**
 * Chromium on Linux takes the authorities a user adds from the NSS database in
 * `$HOME/.pki/nssdb`, and from nowhere else (no switch, no variable names another file): so a
 * browser that must trust a private CA is started with HOME set to a directory of its own
 * whose database holds it, as a trusted issuer of server certificates (`C,,`). Its built-in
 * roots are kept. Built with `certutil` (Debian: libnss3-tools), which must be installed.
 */
export async function nssHome(certificates: readonly string[]): Promise<NssHome> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'screenshot-nss-'));
  const dispose = () => fs.rm(home, { recursive: true, force: true });
  try {
    const db = path.join(home, '.pki', 'nssdb');
    await fs.mkdir(db, { recursive: true, mode: 0o700 });
    await certutil(['-N', '-d', `sql:${db}`, '--empty-password']);
    for (const [i, pem] of certificates.entries()) {
      const file = path.join(home, `authority-${i + 1}.pem`);
      await fs.writeFile(file, pem);
      await certutil(['-A', '-d', `sql:${db}`, '-n', `authority ${i + 1}`, '-t', 'C,,', '-a', '-i', file]);
    }
    return { home, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

async function certutil(args: string[]): Promise<void> {
  try {
    await run('certutil', args, { timeout: CERTUTIL_TIMEOUT_MS });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('--ca-file needs certutil to give the browser the authorities (Debian and Ubuntu: apt-get install libnss3-tools)', { cause: err });
    }
    throw new Error(`certutil could not add an authority for the browser: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`, { cause: err });
  }
}
