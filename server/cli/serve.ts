import path from 'node:path';

import { type Config, loadConfig } from '../config.js';
import { createLogger, type LogLevel } from '../logger.js';
import { startServer } from '../server.js';
import { ADMIN_TOKEN_FILE } from '../store/data-dir.js';
import { UsageError, wholeNumber } from './usage-error.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  data?: string;
  concurrency?: string;
  browsers?: string;
  chromium?: string;
  egressAllow?: string[];
  caFile?: string[];
  proxy?: string;
  noProxy?: string;
  publicUrl?: string;
  logLevel?: string;
  metricsToken?: string;
  database?: string;
  files?: string;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

function logLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return raw as LogLevel;
}

/**
 * Starts the server and prints where it listens. The control panel's address carries the
 * admin token only when stdout is a terminal, where a person reads it: off a terminal (a
 * service manager, a container, a pipe) stdout usually ends up in a journal or a log store,
 * so the line names the token's file instead.
 */
export async function serve(options: ServeOptions, env: Record<string, string | undefined>, stdout: NodeJS.WriteStream): Promise<void> {
  const overrides: Partial<Config> = {
    host: options.host,
    port: wholeNumber('port', options.port),
    dataDir: options.data,
    concurrency: wholeNumber('concurrency', options.concurrency),
    browsers: wholeNumber('browsers', options.browsers),
    chromiumPath: options.chromium,
    publicBaseUrl: options.publicUrl,
    metricsToken: options.metricsToken,
    databaseUrl: options.database,
    filesDir: options.files,
    upstreamProxy: options.proxy,
  };
  const base = loadConfig(env);
  if (options.egressAllow?.length) overrides.egressAllow = [...base.egressAllow, ...options.egressAllow];
  if (options.caFile?.length) overrides.caFiles = [...base.caFiles, ...options.caFile];
  if (options.noProxy !== undefined) overrides.noProxy = options.noProxy.split(',').map((entry) => entry.trim()).filter(Boolean);
  const config = loadConfig(env, overrides);
  // Logs go to stderr: stdout carries only the lines below, which scripts read.
  const log = createLogger({ level: logLevel(options.logLevel), destination: process.stderr });
  const server = await startServer(config, { log });
  const tokenFile = path.join(config.dataDir, ADMIN_TOKEN_FILE);
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
  // Listening for signals before the first line: whoever reads it may stop the server at once.
  const say = (line: string) => stdout.write(`${line}\n`);
  say(`Screenshot Appliance listening on http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${new URL(server.url).port}`);
  say(stdout.isTTY ? `Control panel: ${server.adminUrl}` : `Control panel: ${server.url}/admin/ (open it with the admin token in ${tokenFile})`);
  say(`API base URL: ${server.url}/v1   data: ${config.dataDir}   admin token: ${tokenFile}`);
}
