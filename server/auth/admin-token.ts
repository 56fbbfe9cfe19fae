import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

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
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return token;
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
