import os from 'node:os';
import path from 'node:path';

/** Everything the service reads from its environment and command line, resolved once. */
export interface Config {
  /** Address to listen on. @default "0.0.0.0" */
  host: string;
  /** Port to listen on; 0 picks a free one. @default 8080 */
  port: number;
  /** Directory holding the NeDB files, images and page sources. @default "./data" */
  dataDir: string;
  /**
   * A PostgreSQL connection URL (postgres://…): every store lives there instead of NeDB, and
   * every node given the same URL shares the jobs, accounts, keys, limits, settings and
   * webhooks (cluster mode). @default none: NeDB files in dataDir
   */
  databaseUrl?: string;
  /**
   * Where images, page sources and thumbnails are kept; in a cluster, a directory every node
   * mounts, so any node serves any image. @default dataDir
   */
  filesDir?: string;
  /**
   * S3-compatible object storage for those files instead of a directory (`--files
   * s3://bucket/prefix`, SCREENSHOT_FILES_URL): a cluster's nodes then share no mount.
   * Credentials and region come from the AWS SDK's default chain. @default none: filesDir
   */
  objectStorage?: ObjectStorageConfig;
  /** Cluster mode: how long a node's claim on a job holds without renewal, in seconds. @default 30 */
  jobLeaseSeconds: number;
  /** Captures run at once. @default 2 (about the number of cores) */
  concurrency: number;
  /**
   * Browser processes the captures are shared among (the headless engine). Each capture still
   * gets a fresh context of its own; a second browser lets two captures use both cores instead
   * of taking turns on one browser's main thread. @default 2 (1 on a machine with one core)
   */
  browsers: number;
  /** Jobs waiting or running before POST answers 503. @default 500 */
  queueLimit: number;
  /** Percent of queueLimit one account may hold waiting or running (never fewer than 5 jobs). @default 50 */
  accountQueueShare: number;
  /** Chromium executable; looked up in the usual places when unset. */
  chromiumPath?: string;
  /** CIDR ranges the egress guard allows although they are denied by default. */
  egressAllow: string[];
  /** Deny RFC 1918 and fc00::/7 targets too. @default false */
  egressDenyLan: boolean;
  /**
   * PEM files of certificate authorities the browser, webhooks and uploads trust besides the
   * system's (`--ca-file`, SCREENSHOT_CA_FILES): a company's private CA. @default []
   */
  caFiles: string[];
  /**
   * An upstream HTTP proxy every outgoing connection is carried through (`--proxy`,
   * SCREENSHOT_PROXY), `http://[user:password@]host:port`; the egress guard still decides on each
   * target. @default none: direct connections
   */
  upstreamProxy?: string;
  /** Targets reached directly although upstreamProxy is set (`--no-proxy`, SCREENSHOT_NO_PROXY). @default [] */
  noProxy: string[];
  /** Base for absolute URLs in responses; from the request's Host header when unset. */
  publicBaseUrl?: string;
  /** Proxies whose X-Forwarded-For is trusted (IPs or CIDR ranges). @default [] */
  trustProxy: string[];
  /** Ranges allowed to reach /admin. @default loopback only */
  adminAllow: string[];
  /** Ranges allowed to scrape /metrics. @default the same as adminAllow */
  metricsAllow: string[];
  /**
   * A bearer token that opens /metrics and nothing else, for a scraper that should not hold the
   * admin token. @default none: /metrics takes the admin token
   */
  metricsToken?: string;
  /** @default 30000 */
  navigationTimeoutMs: number;
  /** @default 30000 */
  captureTimeoutMs: number;
  /** Largest full-page height in CSS pixels. @default 16384 */
  fullPageMaxHeight: number;
  /** Resident memory one page may use before it is stopped, in MiB. @default 2048 */
  pageMemoryMb: number;
  /** Largest stored page source. @default 5 MB */
  pageSourceMaxBytes: number;
  /** Days a screenshot and its page source are kept. @default 7 */
  retentionDays: number;
  /** Days a job's record is kept (its files go after retentionDays, or with the record). */
  historyDays: number;
  /** Captures before the browser is restarted. @default 200 */
  recycleAfter: number;
  /** Defaults for new accounts. */
  defaultDailyLimit: number;
  defaultMonthlyLimit: number;
  /** Requests per second per account. @default 10 */
  ratePerSecond: number;
  /**
   * Image requests (`/v1/files/*`, which need no key) per second per client address, IPv6
   * clients per /64. High enough for a page of thumbnails. @default 100
   */
  fileRatePerSecond: number;
  /**
   * Loads per second of one render link (GET /v1/render, by its signature): a budget of its own,
   * so a link embedded in a busy page never spends its account's requests per second. @default 20
   */
  renderRatePerSecond: number;
  /**
   * Open connections one client address may hold (IPv6 clients per /64; trusted proxies are not
   * counted). One more is answered 429 and closed. @default 256
   */
  maxClientConnections: number;
}

export interface ObjectStorageConfig {
  bucket: string;
  /** Empty, or path segments ending in `/`. */
  prefix: string;
  /** A non-AWS endpoint, addressed path-style (SCREENSHOT_S3_ENDPOINT). @default AWS */
  endpoint?: string;
  /**
   * Seconds a presigned address lasts: screenshot_url, once its checks pass, answers 302 to one
   * instead of streaming the image (SCREENSHOT_S3_PRESIGNED). @default none: streamed
   */
  presignSeconds?: number;
}

/** The longest a SigV4 presigned address may last: 7 days. */
const MAX_PRESIGN_SECONDS = 604_800;

export const DEFAULTS: Omit<Config, 'dataDir'> = {
  host: '0.0.0.0',
  port: 8080,
  concurrency: 2,
  browsers: Math.min(2, os.availableParallelism()),
  queueLimit: 500,
  accountQueueShare: 50,
  egressAllow: [],
  egressDenyLan: false,
  caFiles: [],
  noProxy: [],
  trustProxy: [],
  adminAllow: ['127.0.0.0/8', '::1/128'],
  metricsAllow: ['127.0.0.0/8', '::1/128'],
  navigationTimeoutMs: 30_000,
  captureTimeoutMs: 30_000,
  fullPageMaxHeight: 16_384,
  pageMemoryMb: 2048,
  pageSourceMaxBytes: 5_000_000,
  retentionDays: 7,
  historyDays: 90,
  recycleAfter: 200,
  defaultDailyLimit: 1000,
  defaultMonthlyLimit: 30_000,
  ratePerSecond: 10,
  fileRatePerSecond: 100,
  renderRatePerSecond: 20,
  maxClientConnections: 256,
  jobLeaseSeconds: 30,
};

/** An upper bound for --browsers: each browser holds its own memory. */
export const MAX_BROWSERS = 8;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

/**
 * Builds the Config from environment variables and command-line overrides (which win).
 * Pure: the only reader of the environment is the caller passing `env`.
 */
export function loadConfig(env: Record<string, string | undefined>, overrides: Partial<Config> = {}): Readonly<Config> {
  const fromEnv: Config = {
    ...DEFAULTS,
    host: env.SCREENSHOT_HOST || DEFAULTS.host,
    port: int('SCREENSHOT_PORT', env.SCREENSHOT_PORT, DEFAULTS.port, 0, 65535),
    dataDir: path.resolve(env.SCREENSHOT_DATA_DIR || './data'),
    concurrency: int('SCREENSHOT_CONCURRENCY', env.SCREENSHOT_CONCURRENCY, DEFAULTS.concurrency, 1, 64),
    browsers: int('SCREENSHOT_BROWSERS', env.SCREENSHOT_BROWSERS, DEFAULTS.browsers, 1, MAX_BROWSERS),
    queueLimit: int('SCREENSHOT_QUEUE_LIMIT', env.SCREENSHOT_QUEUE_LIMIT, DEFAULTS.queueLimit, 1, 100_000),
    accountQueueShare: int('SCREENSHOT_ACCOUNT_QUEUE_SHARE', env.SCREENSHOT_ACCOUNT_QUEUE_SHARE, DEFAULTS.accountQueueShare, 1, 100),
    chromiumPath: env.CHROMIUM_PATH || undefined,
    egressAllow: list(env.SCREENSHOT_EGRESS_ALLOW),
    egressDenyLan: env.SCREENSHOT_EGRESS_DENY_LAN === '1' || env.SCREENSHOT_EGRESS_DENY_LAN === 'true',
    caFiles: list(env.SCREENSHOT_CA_FILES),
    upstreamProxy: env.SCREENSHOT_PROXY || undefined,
    noProxy: list(env.SCREENSHOT_NO_PROXY),
    publicBaseUrl: env.SCREENSHOT_PUBLIC_BASE_URL || undefined,
    trustProxy: list(env.SCREENSHOT_TRUST_PROXY),
    adminAllow: env.SCREENSHOT_ADMIN_ALLOW ? list(env.SCREENSHOT_ADMIN_ALLOW) : DEFAULTS.adminAllow,
    metricsAllow: list(env.SCREENSHOT_METRICS_ALLOW || env.SCREENSHOT_ADMIN_ALLOW || DEFAULTS.metricsAllow.join(',')),
    metricsToken: env.SCREENSHOT_METRICS_TOKEN || undefined,
    pageMemoryMb: int('SCREENSHOT_PAGE_MEMORY_MB', env.SCREENSHOT_PAGE_MEMORY_MB, DEFAULTS.pageMemoryMb, 128, 1_048_576),
    fileRatePerSecond: int('SCREENSHOT_FILE_RATE', env.SCREENSHOT_FILE_RATE, DEFAULTS.fileRatePerSecond, 1, 100_000),
    renderRatePerSecond: int('SCREENSHOT_RENDER_RATE', env.SCREENSHOT_RENDER_RATE, DEFAULTS.renderRatePerSecond, 1, 100_000),
    maxClientConnections: int('SCREENSHOT_MAX_CLIENT_CONNECTIONS', env.SCREENSHOT_MAX_CLIENT_CONNECTIONS, DEFAULTS.maxClientConnections, 1, 100_000),
    retentionDays: int('SCREENSHOT_RETENTION_DAYS', env.SCREENSHOT_RETENTION_DAYS, DEFAULTS.retentionDays, 1, 3650),
    historyDays: int('SCREENSHOT_HISTORY_DAYS', env.SCREENSHOT_HISTORY_DAYS, DEFAULTS.historyDays, 1, 3650),
    databaseUrl: env.SCREENSHOT_DATABASE_URL || undefined,
    filesDir: env.SCREENSHOT_FILES_URL || env.SCREENSHOT_FILES_DIR || undefined,
    jobLeaseSeconds: int('SCREENSHOT_JOB_LEASE_SECONDS', env.SCREENSHOT_JOB_LEASE_SECONDS, DEFAULTS.jobLeaseSeconds, 2, 3600),
  };
  const merged = { ...fromEnv };
  for (const [k, v] of Object.entries(overrides)) {
    if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  }
  merged.dataDir = path.resolve(merged.dataDir);
  merged.caFiles = merged.caFiles.map((file) => path.resolve(file));
  if (env.SCREENSHOT_FILES_URL && !/^[a-z][a-z0-9+.-]*:\/\//i.test(env.SCREENSHOT_FILES_URL)) {
    throw new ConfigError('SCREENSHOT_FILES_URL takes s3://bucket/prefix; a directory goes in SCREENSHOT_FILES_DIR');
  }
  if (merged.filesDir && /^[a-z][a-z0-9+.-]*:\/\//i.test(merged.filesDir)) {
    merged.objectStorage = {
      ...parseFilesUrl(merged.filesDir),
      endpoint: s3Endpoint(env.SCREENSHOT_S3_ENDPOINT),
      presignSeconds: env.SCREENSHOT_S3_PRESIGNED ? int('SCREENSHOT_S3_PRESIGNED', env.SCREENSHOT_S3_PRESIGNED, 0, 1, MAX_PRESIGN_SECONDS) : undefined,
      ...merged.objectStorage,
    };
    delete merged.filesDir;
  }
  if (merged.filesDir) merged.filesDir = path.resolve(merged.filesDir);
  if (merged.databaseUrl !== undefined && !/^postgres(ql)?:\/\//i.test(merged.databaseUrl)) {
    throw new ConfigError('the database URL must start with postgres:// or postgresql://');
  }
  merged.browsers = int('--browsers', String(merged.browsers), DEFAULTS.browsers, 1, MAX_BROWSERS);
  if (merged.metricsToken !== undefined && merged.metricsToken.length < 16) {
    throw new ConfigError('the metrics token must be at least 16 characters long');
  }
  if (merged.publicBaseUrl) merged.publicBaseUrl = merged.publicBaseUrl.replace(/\/+$/, '');
  return Object.freeze(merged);
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket/prefix` as the files location. Clear errors, naming what is wrong, for another
 * scheme, credentials in the address (they belong in the AWS variables or files), a bucket name
 * S3 would refuse, a query or a fragment. The address is not echoed back: it might hold a secret.
 */
export function parseFilesUrl(url: string): { bucket: string; prefix: string } {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)([?#].*)?$/i.exec(url);
  if (!match || match[1].toLowerCase() !== 's3') {
    throw new ConfigError('--files takes a directory or s3://bucket/prefix (object storage); no other kind of address');
  }
  const [, , authority, rest, extra] = match;
  if (authority.includes('@') || authority.includes(':')) {
    throw new ConfigError(
      '--files s3://… names only the bucket and a prefix: give credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile), and another endpoint in SCREENSHOT_S3_ENDPOINT',
    );
  }
  if (!BUCKET_NAME.test(authority) || authority.includes('..')) {
    throw new ConfigError('the bucket of --files s3://bucket/prefix must be 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit');
  }
  if (extra) throw new ConfigError('--files s3://bucket/prefix takes no query or fragment (?…, #…)');
  const segments = rest.split('/').filter(Boolean);
  if (segments.some((s) => s === '.' || s === '..')) throw new ConfigError('the prefix of --files s3://bucket/prefix must not hold . or .. segments');
  return { bucket: authority, prefix: segments.length ? `${segments.join('/')}/` : '' };
}

function s3Endpoint(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SCREENSHOT_S3_ENDPOINT must be an http:// or https:// address, such as http://minio:9000');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new ConfigError('SCREENSHOT_S3_ENDPOINT must be an http:// or https:// address without credentials, such as http://minio:9000');
  }
  return url.href.replace(/\/+$/, '');
}
