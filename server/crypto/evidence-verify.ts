import crypto from 'node:crypto';
import type { Readable } from 'node:stream';

import yauzl from 'yauzl';

import { DATAPACKAGE_PATH, DIGEST_PATH, type PackageResource, type SignedData } from '../capture/outputs/wacz-bundle.js';
import { verifySignature } from './evidence-key.js';

/**
 * The bounds of a bundle checked (POST /v1/evidence/verify, `verify FILE`): a ZIP file is
 * hostile input, and a small one may unpack to gigabytes. Past them the check stops and says so.
 */
export const VERIFY_BOUNDS = {
  /** Files in the ZIP at most. */
  maxEntries: 256,
  /** Bytes of all its files unpacked, at most (they are hashed as they stream, never held). */
  maxUnpackedBytes: 2 * 1024 * 1024 * 1024,
  /** Bytes of `datapackage.json` or `datapackage-digest.json`, which are read whole. */
  maxManifestBytes: 4 * 1024 * 1024,
} as const;

/** What a check of a bundle found. */
export interface BundleCheck {
  /** Every digest matches and the signature is good: the bundle is as it was signed. */
  valid: boolean;
  /** `valid`, and signed by the key given as this appliance's. */
  signed_by_this_appliance: boolean;
  /** When the bundle says it was made (`created`), or null when it could not be read. */
  created_at: string | null;
  /** The page the bundle holds (`mainPageUrl`), or null. */
  url: string | null;
  /** The key that signed it (base64 SubjectPublicKeyInfo), or null when unsigned or unreadable. */
  public_key: string | null;
  /** What is wrong, one sentence each, naming the file; [] when valid. */
  problems: string[];
}

/**
 * Checks a WACZ bundle as a third party would (the WACZ signing specification's verification):
 * every file `datapackage.json` lists has its SHA-256 and size, the digest file's `hash` is
 * that of `datapackage.json`, its `signedData` signs that hash with the Ed25519 key it names,
 * and `signedData.created` equals `created`. `ownKey`: the key to call this appliance's.
 */
export async function checkBundle(bundle: Buffer, ownKey?: string): Promise<BundleCheck> {
  const problems: string[] = [];
  const check: BundleCheck = { valid: false, signed_by_this_appliance: false, created_at: null, url: null, public_key: null, problems };
  let files: Map<string, { hash: string; bytes: number; text?: string }>;
  try {
    files = await readZip(bundle);
  } catch (err) {
    problems.push(`the bundle is not a readable ZIP file (${err instanceof Error ? err.message : String(err)})`);
    return check;
  }
  const datapackage = parseJson(files.get(DATAPACKAGE_PATH)?.text, DATAPACKAGE_PATH, problems) as
    | { created?: unknown; mainPageUrl?: unknown; resources?: PackageResource[] }
    | undefined;
  const digest = parseJson(files.get(DIGEST_PATH)?.text, DIGEST_PATH, problems) as { hash?: unknown; signedData?: Partial<SignedData> } | undefined;
  if (datapackage) {
    if (typeof datapackage.created === 'string') check.created_at = datapackage.created;
    if (typeof datapackage.mainPageUrl === 'string') check.url = datapackage.mainPageUrl;
    checkResources(datapackage.resources, files, problems);
  }
  if (digest && datapackage) checkSignature(digest, files.get(DATAPACKAGE_PATH)!.hash, datapackage.created, problems, check);
  check.valid = problems.length === 0;
  check.signed_by_this_appliance = check.valid && ownKey !== undefined && check.public_key === ownKey;
  return check;
}

function checkResources(resources: PackageResource[] | undefined, files: Map<string, { hash: string; bytes: number }>, problems: string[]): void {
  if (!Array.isArray(resources)) {
    problems.push(`${DATAPACKAGE_PATH} lists no resources`);
    return;
  }
  const listed = new Set<string>();
  for (const resource of resources) {
    const path = String(resource?.path);
    listed.add(path);
    const file = files.get(path);
    if (!file) problems.push(`${path}: listed in ${DATAPACKAGE_PATH} but missing from the bundle`);
    else if (file.hash !== resource.hash || file.bytes !== resource.bytes) problems.push(`${path}: its digest or size is not the one ${DATAPACKAGE_PATH} lists`);
  }
  for (const path of files.keys()) {
    if (path !== DATAPACKAGE_PATH && path !== DIGEST_PATH && !listed.has(path)) problems.push(`${path}: in the bundle but not listed in ${DATAPACKAGE_PATH}`);
  }
}

function checkSignature(digest: { hash?: unknown; signedData?: Partial<SignedData> }, datapackageHash: string, created: unknown, problems: string[], check: BundleCheck): void {
  if (digest.hash !== datapackageHash) problems.push(`${DATAPACKAGE_PATH}: its digest is not the one ${DIGEST_PATH} gives`);
  const signed = digest.signedData;
  if (!signed || typeof signed.signature !== 'string' || typeof signed.publicKey !== 'string') {
    problems.push(`${DIGEST_PATH}: the bundle is not signed (no signedData with a signature and a publicKey)`);
    return;
  }
  check.public_key = signed.publicKey;
  if (signed.hash !== datapackageHash) problems.push(`${DIGEST_PATH}: signedData.hash is not the digest of ${DATAPACKAGE_PATH}`);
  if (signed.created !== created) problems.push(`${DIGEST_PATH}: signedData.created is not the created of ${DATAPACKAGE_PATH}`);
  if (!verifySignature(signed.publicKey, String(signed.hash), signed.signature)) problems.push(`${DIGEST_PATH}: the signature does not match its public key`);
}

function parseJson(text: string | undefined, path: string, problems: string[]): unknown {
  if (text === undefined) {
    problems.push(`${path}: missing from the bundle`);
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object') return value;
  } catch {
    // said below
  }
  problems.push(`${path}: not a JSON object`);
  return undefined;
}

/** Every file of the ZIP, hashed as it streams; the two manifests also as text. */
async function readZip(bundle: Buffer): Promise<Map<string, { hash: string; bytes: number; text?: string }>> {
  const zip = await yauzl.fromBufferPromise(bundle, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true });
  const files = new Map<string, { hash: string; bytes: number; text?: string }>();
  let unpacked = 0;
  try {
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) return files;
      if (entry.fileName.endsWith('/')) continue;
      if (files.size >= VERIFY_BOUNDS.maxEntries) throw new Error(`more than ${VERIFY_BOUNDS.maxEntries} files`);
      unpacked += entry.uncompressedSize;
      if (unpacked > VERIFY_BOUNDS.maxUnpackedBytes) throw new Error(`more than ${VERIFY_BOUNDS.maxUnpackedBytes} bytes unpacked`);
      const manifest = entry.fileName === DATAPACKAGE_PATH || entry.fileName === DIGEST_PATH;
      if (manifest && entry.uncompressedSize > VERIFY_BOUNDS.maxManifestBytes) throw new Error(`${entry.fileName} is larger than ${VERIFY_BOUNDS.maxManifestBytes} bytes`);
      files.set(entry.fileName, await digestOf(await zip.openReadStreamPromise(entry), manifest));
    }
  } finally {
    zip.close();
  }
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => (cleanup(), resolve(entry));
    const onEnd = () => (cleanup(), resolve(null));
    const onError = (err: Error) => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

async function digestOf(stream: Readable, keepText: boolean): Promise<{ hash: string; bytes: number; text?: string }> {
  const hash = crypto.createHash('sha256');
  const kept: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    if (keepText) kept.push(chunk);
  }
  const text = keepText ? Buffer.concat(kept).toString('utf8') : undefined;
  return { hash: `sha256:${hash.digest('hex')}`, bytes, ...(text === undefined ? {} : { text }) };
}
