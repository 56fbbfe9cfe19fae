import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { SECRET_KEY_FILE, SHARED_SECRET_KEY, writePrivateFile } from '../store/data-dir.js';
import type { SharedValues } from '../store/stores.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals what a job must keep but never show (the values of its `headers`, `cookies` and
 * `http_auth`) with AES-256-GCM under a key of the data directory, so a job record, a backup of
 * jobs.db or a log line never holds them in clear, and the job can still run after a restart.
 * A sealed value is `v1.<base64url of iv | tag | ciphertext>`.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The box keyed by `<dataDir>/job-secrets.key`, creating the key at first use. */
  static forDataDir(dataDir: string): SecretBox {
    const file = path.join(dataDir, SECRET_KEY_FILE);
    try {
      const key = fs.readFileSync(file);
      if (key.length === 32) return new SecretBox(key);
    } catch {
      // made below
    }
    const key = crypto.randomBytes(32);
    writePrivateFile(file, key);
    return new SecretBox(key);
  }

  /**
   * Cluster mode: the box keyed by the key every node shares (the first node's own key becomes
   * everyone's), so a job sealed on one node runs on another. This node's key file gets it too.
   */
  static async shared(shared: SharedValues, dataDir: string): Promise<SecretBox> {
    const own = SecretBox.forDataDir(dataDir).key;
    const key = Buffer.from(await shared.getOrSet(SHARED_SECRET_KEY, own.toString('base64')), 'base64');
    if (!key.equals(own)) writePrivateFile(path.join(dataDir, SECRET_KEY_FILE), key);
    return new SecretBox(key);
  }

  seal(value: unknown): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv(ALGORITHM, this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /**
   * A keyed digest (HMAC-SHA256, base64url) of `text`: equal texts give equal digests, and
   * without the data directory's key a digest tells nothing of a guessable text.
   */
  digest(text: string): string {
    return crypto.createHmac('sha256', this.key).update('digest\0').update(text).digest('base64url');
  }

  /** The value sealed, or throws when it was sealed under another key or altered. */
  open<T>(sealed: string): T {
    if (!sealed.startsWith('v1.')) throw new Error('not a sealed value');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = crypto.createDecipheriv(ALGORITHM, this.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as T;
  }
}
