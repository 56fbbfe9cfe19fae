import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { writePrivateFile } from '../store/data-dir.js';
import type { SharedValues } from '../store/stores.js';

/** The appliance's evidence signing key (PKCS #8, PEM) in the data directory: 0600, made at first start. */
export const EVIDENCE_KEY_FILE = 'evidence-signing.key';
/** Cluster mode: that key's name among the values every node shares (PEM). */
export const SHARED_EVIDENCE_KEY = 'evidence_signing_key';

/**
 * The Ed25519 key pair that signs evidence bundles (the WACZ `datapackage-digest.json`). Its
 * private half never leaves the data directory (and, in a cluster, the shared values every node
 * reads); its public half, as base64 of its SubjectPublicKeyInfo (DER), is what a bundle names
 * in `signedData.publicKey` and what GET /v1/evidence/public-key shows, so a third party can
 * tell this appliance's bundles from any other's.
 */
export class EvidenceKey {
  /** The public key, base64 of its SubjectPublicKeyInfo (DER). */
  readonly publicKey: string;

  private constructor(private readonly privateKey: crypto.KeyObject) {
    this.publicKey = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
  }

  /** The key of `<dataDir>/evidence-signing.key`, created at first use. */
  static forDataDir(dataDir: string): EvidenceKey {
    const file = path.join(dataDir, EVIDENCE_KEY_FILE);
    const stored = readKey(file);
    if (stored) return new EvidenceKey(stored);
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    writePrivateFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    return new EvidenceKey(privateKey);
  }

  /** The public key kept in `dataDir`, or null when it holds none (nothing is created). */
  static publicKeyIn(dataDir: string): string | null {
    const stored = readKey(path.join(dataDir, EVIDENCE_KEY_FILE));
    return stored && new EvidenceKey(stored).publicKey;
  }

  /** Cluster mode: the key every node shares (the first node's own becomes everyone's), so a bundle is signed alike by any node. */
  static async shared(shared: SharedValues, dataDir: string): Promise<EvidenceKey> {
    const own = EvidenceKey.forDataDir(dataDir).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pem = await shared.getOrSet(SHARED_EVIDENCE_KEY, own);
    if (pem !== own) writePrivateFile(path.join(dataDir, EVIDENCE_KEY_FILE), pem);
    return new EvidenceKey(crypto.createPrivateKey(pem));
  }

  /** The Ed25519 signature of `text` (UTF-8), base64. */
  sign(text: string): string {
    return crypto.sign(null, Buffer.from(text, 'utf8'), this.privateKey).toString('base64');
  }
}

/** Whether `signature` (base64) is the signature of `text` by the Ed25519 `publicKey` (base64 SPKI DER); false for anything malformed. */
export function verifySignature(publicKey: string, text: string, signature: string): boolean {
  try {
    const key = crypto.createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519') return false;
    return crypto.verify(null, Buffer.from(text, 'utf8'), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

function readKey(file: string): crypto.KeyObject | null {
  let pem: Buffer;
  try {
    pem = fs.readFileSync(file);
  } catch {
    return null;
  }
  const key = crypto.createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds no Ed25519 key`);
  return key;
}
