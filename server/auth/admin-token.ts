import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { SharedValues } from '../store/stores.js';

/** Reads `<dataDir>/admin-token`, creating it (mode 0600) at first start. */
export function loadOrCreateAdminToken(dataDir: string): string {
  const file = path.join(dataDir, 'admin-token');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // created below
  }
  const token = crypto.randomBytes(32).toString('base64url');
  writePrivate(file, `${token}\n`);
  return token;
}

/**
 * Cluster mode: the token every node accepts, kept in the shared store (the first node's own
 * token becomes everyone's) and written to this node's `<dataDir>/admin-token` as well, where
 * the account and key commands and the operator look for it.
 */
export async function sharedAdminToken(shared: SharedValues, dataDir: string): Promise<string> {
  const own = loadOrCreateAdminToken(dataDir);
  const token = await shared.getOrSet('admin_token', own);
  if (token !== own) writePrivate(path.join(dataDir, 'admin-token'), `${token}\n`);
  return token;
}

function writePrivate(file: string, text: string): void {
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/** The session cookie's value: derived from the token, so it dies when the token changes. */
export function sessionValue(token: string): string {
  return crypto.createHmac('sha256', token).update('admin-session-v1').digest('base64url');
}

/** Constant-time comparison of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}
