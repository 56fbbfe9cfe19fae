import fs from 'node:fs';
import path from 'node:path';

import { ADMIN_TOKEN_FILE } from '../store/data-dir.js';
import { UsageError } from './usage-error.js';

/**
 * Calls the admin API of the server that owns the data directory: its address from
 * `server.json`, the token from `admin-token`, both written there by the running server.
 */
// The admin API's answers, printed or read by field as the commands need them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function adminCall(dataDir: string, method: string, route: string, body?: unknown): Promise<any> {
  let url: string;
  let token: string;
  try {
    url = JSON.parse(fs.readFileSync(path.join(dataDir, 'server.json'), 'utf8')).url;
    token = fs.readFileSync(path.join(dataDir, ADMIN_TOKEN_FILE), 'utf8').trim();
  } catch {
    throw new UsageError(`No running server found for the data directory ${dataDir}; start it with: npm run serve -- --data ${dataDir}`);
  }
  const res = await fetch(`${url}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  }).catch(() => {
    throw new UsageError(`The server at ${url} does not answer; is it running?`);
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw new UsageError(`${data?.error ?? res.status}: ${data?.message ?? text}`);
  return data;
}

/** An account id from `--account`, which may be the account's e-mail address. */
export async function accountId(dataDir: string, ref: string | undefined): Promise<string> {
  if (!ref) throw new UsageError('--account is required');
  if (!ref.includes('@')) return ref;
  const { accounts } = await adminCall(dataDir, 'GET', '/accounts');
  const found = accounts.find((a: { email: string }) => a.email === ref.toLowerCase());
  if (!found) throw new UsageError(`No account with e-mail ${ref}`);
  return found.id;
}
