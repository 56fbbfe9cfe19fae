import { type ChildProcess,spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';

export const CLI = path.resolve('dist/server/cli.js');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  firstLine: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `screenshot-appliance serve` from the build and waits for its first line; `env` is added to the test's environment. */
export async function serve(args: string[], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout! });
  const firstLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no output after ${timeoutMs} ms: ${err}`)), timeoutMs);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
  const match = /listening on (http:\/\/[^\s]+)/.exec(firstLine);
  if (!match) throw new Error(`unexpected first line: ${firstLine}`);
  return { child, url: match[1], firstLine, stderr: () => err, exited };
}

/** Runs the CLI to completion. */
export function runCli(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The admin token the served process wrote in its data directory. */
export async function adminToken(dataDir: string): Promise<string> {
  return (await fs.readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();
}

/** Calls a served process's admin API with its token: a POST of `body` as JSON when given, a GET otherwise; the parsed answer. */
export async function adminCall(url: string, token: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}/admin/api${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

export interface ServeWithKey extends ServeProcess {
  /** The data directory's admin token. */
  token: string;
  accountId: string;
  /** An API key of the verified account made through the admin API. */
  key: string;
  /** `adminCall` on this process. */
  admin(route: string, body?: unknown): Promise<any>;
}

/**
 * `serve(args)` (which must name the data directory with `--data`), then a verified account
 * with `email` and a key named `keyName` for it, made through the admin API with the token.
 */
export async function serveWithKey(args: string[], email: string, keyName = 'k'): Promise<ServeWithKey> {
  const at = args.indexOf('--data');
  if (at < 0) throw new Error('serveWithKey needs --data in its arguments, to read the admin token there');
  const proc = await serve(args);
  const token = await adminToken(args[at + 1]);
  const admin = (route: string, body?: unknown) => adminCall(proc.url, token, route, body);
  const account = await admin('/accounts', { email, email_verified: true });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name: keyName });
  return { ...proc, token, accountId: account.id, key, admin };
}
