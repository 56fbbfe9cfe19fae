import fs from 'node:fs';

import { EvidenceKey } from '../crypto/evidence-key.js';
import { type BundleCheck, checkBundle } from '../crypto/evidence-verify.js';
import { UsageError } from './usage-error.js';

export interface VerifyOptions {
  /** The key to call this appliance's: base64 SubjectPublicKeyInfo, as GET /v1/evidence/public-key shows it. */
  publicKey?: string;
  /** A data directory whose signing key is this appliance's, when no `publicKey` is given. */
  dataDir?: string;
}

/**
 * `screenshot-appliance verify FILE`: the check of POST /v1/evidence/verify, offline. Prints
 * what it found as JSON; resolves to it (valid or not: the caller's exit code).
 */
export async function verifyCommand(file: string, options: VerifyOptions, out: NodeJS.WritableStream): Promise<BundleCheck> {
  let bundle: Buffer;
  try {
    bundle = await fs.promises.readFile(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const ownKey = options.publicKey ?? (options.dataDir && fs.existsSync(options.dataDir) ? EvidenceKey.publicKeyIn(options.dataDir) : null) ?? undefined;
  const check = await checkBundle(bundle, ownKey);
  out.write(`${JSON.stringify(check, null, 2)}\n`);
  return check;
}
