import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { ADMIN_TOKEN_FILE, SHARED_ADMIN_TOKEN, writePrivateFile } from '../store/data-dir.js';
import type { SharedValues } from '../store/stores.js';

/** Reads `<dataDir>/admin-token`, creating it (mode 0600) at first start. */
export function loadOrCreateAdminToken(dataDir: string): string {
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // created below
  }
  const token = crypto.randomBytes(32).toString('base64url');
  writePrivateFile(file, `${token}\n`);
  return token;
}

/**
 * Cluster mode: the token every node accepts, kept in the shared store (the first node's own
 * token becomes everyone's) and written to this node's `<dataDir>/admin-token` as well, where
 * the account and key commands and the operator look for it.
 */
export async function sharedAdminToken(shared: SharedValues, dataDir: string): Promise<string> {
  const own = loadOrCreateAdminToken(dataDir);
  const token = await shared.getOrSet(SHARED_ADMIN_TOKEN, own);
  if (token !== own) writePrivateFile(path.join(dataDir, ADMIN_TOKEN_FILE), `${token}\n`);
  return token;
}

/**
 * What a control-panel session keeps of the token that opened it (see AdminSessions): a keyed
 * digest, never the token itself, compared with the current token's to end sessions of an old one.
 */
export function tokenFingerprint(token: string): string {
  return crypto.createHmac('sha256', token).update('admin-session-v2').digest('base64url');
}

/** Constant-time comparison of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}
