#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ChromiumNotFoundError } from './capture/chromium-path.js';
import { type Config,ConfigError, loadConfig } from './config.js';
import { createLogger, type LogLevel } from './logger.js';
import { startServer } from './server.js';
import { DataDirLockedError } from './store/data-lock.js';

const USAGE = `Usage:
  screenshot-appliance serve [--host H] [--port N] [--data DIR] [--concurrency N]
                             [--browsers N] [--chromium PATH] [--egress-allow CIDR]...
                             [--public-url URL] [--log-level debug|info|warn|error]
  screenshot-appliance account create --email E [--unverified] [--plan super_user|basic]
                                      [--daily-limit N] [--monthly-limit N]
  screenshot-appliance account list
  screenshot-appliance key create --account ID|EMAIL [--name NAME] [--ip ADDRESS|CIDR]...
  screenshot-appliance key list --account ID|EMAIL
  screenshot-appliance key revoke KEY_ID

The account and key commands talk to the running server of --data DIR (default ./data).
serve logs to stderr: JSON lines, or readable lines when stderr is a terminal.`;

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  data: { type: 'string' },
  concurrency: { type: 'string' },
  browsers: { type: 'string' },
  chromium: { type: 'string' },
  'egress-allow': { type: 'string', multiple: true },
  'public-url': { type: 'string' },
  'log-level': { type: 'string' },
  email: { type: 'string' },
  unverified: { type: 'boolean' },
  plan: { type: 'string' },
  'daily-limit': { type: 'string' },
  'monthly-limit': { type: 'string' },
  account: { type: 'string' },
  name: { type: 'string' },
  ip: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

function logLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return raw as LogLevel;
}

function number(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  return n;
}

async function serve(values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values']): Promise<void> {
  const overrides: Partial<Config> = {
    host: values.host,
    port: number('port', values.port),
    dataDir: values.data,
    concurrency: number('concurrency', values.concurrency),
    browsers: number('browsers', values.browsers),
    chromiumPath: values.chromium,
    publicBaseUrl: values['public-url'],
  };
  const env = process.env;
  const base = loadConfig(env);
  if (values['egress-allow']) overrides.egressAllow = [...base.egressAllow, ...values['egress-allow']];
  const config = loadConfig(env, overrides);
  // Logs go to stderr: stdout carries only the lines below, which scripts read.
  const log = createLogger({ level: logLevel(values['log-level']), destination: process.stderr });
  const server = await startServer(config, { log });
  console.log(`Screenshot Appliance listening on http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${new URL(server.url).port}`);
  console.log(`Control panel: ${server.adminUrl}`);
  console.log(`API base URL: ${server.url}/v1   data: ${config.dataDir}   admin token: ${path.join(config.dataDir, 'admin-token')}`);
  const own = log.child({ component: 'server' });
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(130);
    own.info(`${signal} received: finishing running captures and shutting down`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        own.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/** Calls the admin API of the server that owns the data directory. */
// The admin API's answers, printed or read by field as the commands need them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function admin(dataDir: string, method: string, route: string, body?: unknown): Promise<any> {
  let url: string;
  let token: string;
  try {
    url = JSON.parse(fs.readFileSync(path.join(dataDir, 'server.json'), 'utf8')).url;
    token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
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

async function accountId(dataDir: string, ref: string | undefined): Promise<string> {
  if (!ref) throw new UsageError('--account is required');
  if (!ref.includes('@')) return ref;
  const { accounts } = await admin(dataDir, 'GET', '/accounts');
  const found = accounts.find((a: { email: string }) => a.email === ref.toLowerCase());
  if (!found) throw new UsageError(`No account with e-mail ${ref}`);
  return found.id;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, sub, arg] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  if (command === 'serve') return serve(values);
  const dataDir = path.resolve(values.data ?? process.env.SCREENSHOT_DATA_DIR ?? './data');
  const print = (x: unknown) => console.log(JSON.stringify(x, null, 2));
  if (command === 'account' && sub === 'create') {
    if (!values.email) throw new UsageError('--email is required');
    return print(
      await admin(dataDir, 'POST', '/accounts', {
        email: values.email,
        email_verified: !values.unverified,
        plan: values.plan,
        daily_limit: number('daily-limit', values['daily-limit']),
        monthly_limit: number('monthly-limit', values['monthly-limit']),
      }),
    );
  }
  if (command === 'account' && sub === 'list') return print((await admin(dataDir, 'GET', '/accounts')).accounts);
  if (command === 'key' && sub === 'create') {
    const id = await accountId(dataDir, values.account);
    return print(await admin(dataDir, 'POST', `/accounts/${id}/keys`, { name: values.name, ip_whitelist: values.ip ?? [] }));
  }
  if (command === 'key' && sub === 'list') {
    const id = await accountId(dataDir, values.account);
    return print((await admin(dataDir, 'GET', `/accounts/${id}/keys`)).keys);
  }
  if (command === 'key' && sub === 'revoke') {
    if (!arg) throw new UsageError('key revoke needs the key id');
    return print(await admin(dataDir, 'PATCH', `/keys/${arg}`, { revoked: true }));
  }
  throw new UsageError(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((err) => {
  const known =
    [UsageError, ConfigError, DataDirLockedError, ChromiumNotFoundError, TypeError].some((kind) => err instanceof kind) ||
    err?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
  console.error(known ? `error: ${err.message}` : err);
  process.exit(err instanceof UsageError || err?.code?.startsWith?.('ERR_PARSE_ARGS') ? 2 : 1);
});
