import crypto from 'node:crypto';
import os from 'node:os';

import { parseScreenshotParams } from './api/screenshot-params.js';
import { AccountService } from './auth/accounts.js';
import { AdminSessions } from './auth/admin-sessions.js';
import { loadOrCreateAdminToken, sharedAdminToken } from './auth/admin-token.js';
import { ApiKeyService } from './auth/api-keys.js';
import { ChromiumEngine } from './capture/chromium/chromium-engine.js';
import { findChromium } from './capture/chromium/chromium-path.js';
import { type CaptureEngine, oneBrowser } from './capture/engine.js';
import type { EngineEvents } from './capture/engine-events.js';
import { EnginePool } from './capture/engine-pool.js';
import type { Config } from './config.js';
import { EvidenceKey } from './crypto/evidence-key.js';
import { SecretBox } from './crypto/secret-box.js';
import { createEgressPolicy, type EgressPolicy, type Resolver } from './egress/policy.js';
import { type EgressProxy,startEgressProxy } from './egress/proxy.js';
import { nodeCa, readAuthorities, type TrustedAuthorities } from './egress/trusted-authorities.js';
import { parseUpstreamProxy, type UpstreamProxy } from './egress/upstream-proxy.js';
import { BatchService } from './jobs/batch-service.js';
import { EndWriteBehind } from './jobs/end-write-behind.js';
import { IdempotentRequests } from './jobs/idempotent-requests.js';
import type { JobQueue } from './jobs/job-queue.js';
import { JobRunner } from './jobs/job-runner.js';
import { JobService } from './jobs/job-service.js';
import { Retention } from './jobs/retention.js';
import { SitemapReader } from './jobs/sitemap-reader.js';
import { QuotaService } from './limits/quota.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { ListenerList } from './listener-list.js';
import { createLogger, type LineLog, lineLogger, type Logger } from './logger.js';
import { LoginService } from './logins/login-service.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { MonitorChecks } from './monitors/monitor-checks.js';
import { MonitorScheduler } from './monitors/monitor-scheduler.js';
import { MonitorService } from './monitors/monitor-service.js';
import { ChatNotifier } from './monitors/notify-chat.js';
import { EmailNotifier } from './monitors/notify-email.js';
import { type LifecycleStep, startSteps, stopSteps } from './service-lifecycle.js';
import { serviceSoftware } from './service-version.js';
import { allowedRanges, settingsFromConfig,SettingsService } from './settings.js';
import { prepareDataDir } from './store/data-dir.js';
import { acquireDataLock } from './store/data-lock.js';
import type { FileStore } from './store/file-store.js';
import { openFileStore } from './store/open-file-store.js';
import { openStores } from './store/open-stores.js';
import { type JobRecord, UNFINISHED_STATUSES } from './store/records/job-record.js';
import { proveFilesShared } from './store/shared-files.js';
import type { Stores } from './store/stores.js';
import { type Clock,systemClock } from './time.js';
import { CustomerUploads } from './uploads/customer-upload.js';
import { StorageDestinations } from './uploads/destinations.js';
import { batchEndWebhook } from './webhooks/batch-ended.js';
import { jobEndWebhooks } from './webhooks/job-ended.js';
import { createWebhookService, type WebhookService } from './webhooks/webhook-service.js';

/** Cluster mode: how often a node looks for jobs and webhook deliveries posted elsewhere, ms. */
const CLUSTER_POLL_MS = 1000;
/** Cluster mode: how often a node reads the settings again, ms. */
const SETTINGS_POLL_MS = 2000;
/** Cluster mode: how often each node looks for job ends whose webhook a dead node left unstored. */
const WEBHOOK_DUE_POLL_MS = 5000;
/** Cluster mode: how long after a job's end its own node has to store the webhook before others do. */
const WEBHOOK_DUE_GRACE_MS = 10_000;

/** What an entry point may supply instead of the defaults. */
export interface ServiceDeps {
  /** The capture engine; ChromiumEngine on the system Chromium by default (Electron passes its own). */
  engine?: CaptureEngine | ((options: { proxyServer?: string; events?: EngineEvents; trustedCertificates: string[] }) => CaptureEngine);
  /**
   * Where the services log. A line callback (the desktop shell's log) is wrapped in a
   * Logger. @default createLogger(): JSON lines on stdout, readable lines on a terminal
   */
  log?: Logger | LineLog;
  clock?: Clock;
  /** Name resolution for the egress guard (tests point names at loopback addresses). */
  resolve?: Resolver;
  /** Webhook retry delays in ms (tests shorten them). @default about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h */
  webhookSchedule?: readonly number[];
  /** When the first retention sweep runs, ms after start (tests hold it back to call it themselves). @default 0 */
  firstSweepAfterMs?: number;
  /** How often the monitors' scheduler looks for due occurrences, ms. @default 1000 */
  monitorPollMs?: number;
}

export interface Services {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  stores: Stores;
  files: FileStore;
  accounts: AccountService;
  keys: ApiKeyService;
  quota: QuotaService;
  rateLimiter: RateLimiter;
  /** Image requests per client address (GET /v1/files/*). */
  fileRateLimiter: RateLimiter;
  /** Loads per second of each render link. */
  renderRateLimiter: RateLimiter;
  settings: SettingsService;
  /** Jobs as requests see them: room in the queue, creation, queries. */
  jobs: JobService;
  /** Batches (POST /v1/batches): admitted whole, fed into the queue as their jobs end. */
  batches: BatchService;
  /** Reads the sitemap of a batch, through the egress guard. */
  sitemaps: SitemapReader;
  /** The front door to the queue (stats, pause, resume, changes, estimates) for the API, the metrics and the tray. */
  queue: JobQueue;
  retention: Retention;
  engine: CaptureEngine;
  egress: EgressPolicy;
  webhooks: WebhookService;
  /** Monitors: scheduled captures compared with a baseline. */
  monitors: MonitorService;
  /** The accounts' storage destinations (customer uploads). */
  destinations: StorageDestinations;
  /** The accounts' saved logins, and their sessions. */
  logins: LoginService;
  /** What POST /v1/screenshot answered each Idempotency-Key, for its retries. */
  idempotency: IdempotentRequests;
  /** The Prometheus metrics (GET /metrics), in a registry of this instance's own. */
  metrics: ServiceMetrics;
  /** The egress guard's forward proxy, through which every browser connection goes. */
  egressProxyUrl: string | undefined;
  adminToken: string;
  /** The key pair signing evidence bundles (made at first start, shared by a cluster's nodes). */
  evidenceKey: EvidenceKey;
  /** The control panel's sessions (in memory: see AdminSessions). */
  adminSessions: AdminSessions;
  rendererDir?: string;
  isReady(): boolean;
  /** True between start() and stop(). */
  isStarted(): boolean;
  start(): Promise<void>;
  /**
   * Graceful: stop taking jobs, let running ones finish (or re-queue them), flush the stores.
   * Resolves to the jobs left waiting for the next start (in a cluster: for any node), when the store could tell.
   */
  stop(graceMs?: number): Promise<number | undefined>;
}

/** The composition root shared by the headless server and the desktop app: it builds, wires, and lists the start and stop. */
export async function createServices(config: Readonly<Config>, deps: ServiceDeps = {}): Promise<Services> {
  const metrics = new ServiceMetrics();
  const log = typeof deps.log === 'function' ? lineLogger(deps.log) : deps.log ?? createLogger();
  const clock = deps.clock ?? systemClock;
  prepareDataDir(config.dataDir);
  const lock = acquireDataLock(config.dataDir);
  // Started in this order, stopped in the reverse; what opens while building adds its own step.
  const steps: LifecycleStep[] = [{ name: 'the data directory lock', stop: () => lock.release() }];
  try {
    const { files, stores, settings, cluster, adminToken, secrets, evidenceKey } = await openStorage(config, clock, log, metrics, steps);
    const authorities = readAuthorities(config.caFiles);
    const upstream = config.upstreamProxy ? parseUpstreamProxy(config.upstreamProxy, config.noProxy) : undefined;
    const { egress, proxy, engine } = await startEgress(config, deps, settings, log, metrics, steps, authorities, upstream);
    const accounts = new AccountService(stores.accounts, clock, { dailyLimit: config.defaultDailyLimit, monthlyLimit: config.defaultMonthlyLimit });
    const keys = new ApiKeyService(stores.keys, clock, secrets);
    const destinations = new StorageDestinations({ store: stores.destinations, accounts: stores.accounts, secrets, clock });
    const logins = new LoginService({ store: stores.logins, secrets, clock, log: log.child({ component: 'logins' }) });
    const quota = new QuotaService(stores.usage, clock);
    const webhooks = createWebhookService({
      store: stores.deliveries,
      policy: egress,
      // The job may be gone (retention) before its last retry: then the narrowest scope.
      // The key of the job (or the batch: batch.completed) a delivery is of; none left: public only.
      scopeOf: async (doc) => {
        const owner = (await stores.jobs.get(doc.job_id)) ?? (await stores.batches.get(doc.job_id));
        return owner ? keys.networkScope(owner.key_id) : 'public';
      },
      secrets: (accountId) => accounts.signingSecrets(accountId),
      ca: nodeCa(authorities),
      upstream,
      clock,
      schedule: deps.webhookSchedule,
      log,
      cluster: cluster && { node: cluster.node, pollMs: CLUSTER_POLL_MS },
      onAttempt: (outcome) => metrics.webhookAttempt(outcome),
    });
    const endWebhooks = jobEndWebhooks(webhooks, stores.jobs, log);
    // Told of each job's end once it is stored; the services built below subscribe.
    const jobEnds = new ListenerList<JobRecord>();
    jobEnds.subscribe((job) => metrics.jobEnded(job));
    jobEnds.subscribe((job) => endWebhooks.announce(job));
    const ends = new EndWriteBehind({ store: stores.jobs, log: log.child({ component: 'jobs' }), onEnded: (job) => jobEnds.emit(job) });
    const runner = new JobRunner({
      store: stores.jobs,
      files,
      engine,
      settings,
      clock,
      log,
      ends,
      guard: egress,
      networkOf: async (job) => {
        const scope = await keys.networkScope(job.key_id);
        return { scope, proxyServer: await proxy.urlFor(scope) };
      },
      onFailed: (err, signal) => metrics.jobFailed(err, signal),
      onRetried: () => metrics.captureRetried(),
      pageSourceMaxBytes: config.pageSourceMaxBytes,
      secrets,
      jobSecrets: stores.jobSecrets,
      uploads: new CustomerUploads({ destinations, policy: egress, log, route: { ca: nodeCa(authorities), upstream } }),
      evidence: { signer: evidenceKey, software: serviceSoftware() },
      logins,
      cluster: cluster && { node: cluster.node, leaseMs: config.jobLeaseSeconds * 1000, pollMs: CLUSTER_POLL_MS },
    });
    const queue = runner.queue;
    const jobs = new JobService({ store: stores.jobs, stats: stores.stats, clock, settings, queue, ends, secrets, jobSecrets: stores.jobSecrets, pollEndsMs: cluster && CLUSTER_POLL_MS / 4 });
    jobEnds.subscribe((job) => jobs.ended(job));
    const batches = new BatchService({ store: stores.batches, jobs, queue, secrets, clock, log, onEnded: batchEndWebhook(webhooks, log) });
    jobEnds.subscribe((job) => batches.jobEnded(job));
    const { monitors, monitorChecks, scheduler } = buildMonitors({
      stores, jobs, files, webhooks, quota, secrets, settings, clock, log, pollMs: deps.monitorPollMs,
      chat: new ChatNotifier({ policy: egress, scopeOf: (monitor) => keys.networkScope(monitor.key_id), ca: nodeCa(authorities), log: log.child({ component: 'monitors' }) }),
      email: new EmailNotifier({ settings, log: log.child({ component: 'monitors' }) }),
    });
    jobEnds.subscribe((job) => monitorChecks.jobEnded(job));
    const retention = new Retention({ stores, files, settings, clock, log: log.child({ component: 'retention' }) });
    metrics.watch({
      queue: () => queue.stats(),
      browsers: () => engine.browsers?.() ?? oneBrowser(engine.isReady()),
      webhookDeliveries: () => stores.deliveries.countByStatus(),
    });

    let waiting: number | undefined;
    let started = false;
    const sealChatUrls = async () => {
      const sealed = await monitors.sealClearChatUrls((await accounts.list()).map((account) => account._id));
      if (sealed) await stores.compact();
      return sealed;
    };
    steps.push(
      compactAtStop(stores, log, (count) => (waiting = count)),
      { name: 'the browser', start: () => engine.start(), stop: () => engine.close() },
      // Chat URLs an earlier version kept in clear are sealed before any check sends to them; NeDB's old lines go with a compaction.
      {
        name: "the monitors' chat URLs",
        start: () =>
          logCount(log, 'monitors', sealChatUrls(), (n) => `sealed the Slack and Teams URLs of ${n} monitor(s) kept in clear by an earlier version`),
      },
      // Secrets left by a stop between a job's end and their erasure go before any job runs.
      { name: 'the job secrets sweep', start: () => logCount(log, 'jobs', stores.jobSecrets.sweep(), (n) => `erased the secrets of ${n} job(s) that had ended`) },
      { name: 'the webhooks', start: () => webhooks.start(), stop: () => webhooks.stop() },
      // Webhooks of ends stored just before the last stop; in a cluster, also those a dead node left.
      { name: 'the webhooks due', start: () => logCount(log, 'webhooks', endWebhooks.recover(clock.now()), (n) => `queued the webhooks of ${n} job(s) that ended before the last stop`) },
      // Comparisons a stop left undone. Before the runner, so at a stop it waits for the comparisons
      // of the jobs the runner ends meanwhile.
      {
        name: 'the monitor checks',
        start: () => logCount(log, 'monitors', monitorChecks.recover(), (n) => `compared ${n} check(s) left by the last stop`),
        stop: () => monitorChecks.stop(),
      },
      // Stopped after the runner: the counts of the jobs that end as it stops are stored before the stores close.
      { name: "the batches' counts", stop: () => batches.drain() },
      { name: 'the job runner', start: () => runner.recover(), stop: (graceMs) => runner.stop(graceMs) },
      {
        name: 'the batches',
        start: () => logCount(log, 'batches', batches.start(), (n) => `feeding ${n} batch(es) left running by the last stop`),
        stop: () => batches.stop(),
      },
      { name: 'retention', start: () => retention.start(undefined, deps.firstSweepAfterMs), stop: () => retention.stop() },
      // Then the schedules: an occurrence missed while stopped runs once now.
      { name: 'the monitor scheduler', start: () => scheduler.start(), stop: () => scheduler.stop() },
      ...(cluster ? clusterPolls(settings, endWebhooks, clock, log) : []),
      { name: 'readiness', start: () => void (started = true), stop: () => void (started = false) },
    );
    return {
      config, log, clock, stores, files, accounts, keys, quota, settings, jobs, batches, queue, retention, engine, egress, webhooks, monitors, destinations, logins, metrics, egressProxyUrl: proxy.url, adminToken, evidenceKey,
      rateLimiter: new RateLimiter(clock, config.ratePerSecond),
      fileRateLimiter: new RateLimiter(clock, config.fileRatePerSecond),
      renderRateLimiter: new RateLimiter(clock, config.renderRatePerSecond),
      idempotency: new IdempotentRequests({ store: stores.idempotency, clock, log }),
      sitemaps: new SitemapReader(egress),
      adminSessions: new AdminSessions(clock, () => adminToken),
      isReady: () => started && engine.isReady(),
      isStarted: () => started,
      start: () => startSteps(steps),
      async stop(graceMs = 10_000) {
        await stopSteps(steps, log, graceMs);
        return waiting;
      },
    };
  } catch (err) {
    await stopSteps(steps, log, 0);
    throw err;
  }
}

/**
 * The files, the stores and their settings, and what the nodes of a cluster share: the admin
 * token and the key sealing job secrets (each node keeps a copy in its data directory).
 */
async function openStorage(config: Readonly<Config>, clock: Clock, log: Logger, metrics: ServiceMetrics, steps: LifecycleStep[]) {
  const files = openFileStore(config, (operation, seconds, failed) => metrics.storageOperation(operation, seconds, failed));
  const { stores, settings } = await openStores({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    files,
    loadSettings: async (store) => {
      const loaded = new SettingsService(store, settingsFromConfig(config));
      await loaded.load();
      return loaded;
    },
    now: () => clock.now(),
    log,
  });
  steps.push({ name: 'the stores', stop: () => stores.close() });
  await files.init();
  if (config.objectStorage) log.info({ component: 'stores' }, `files in object storage: ${files.where}${config.objectStorage.endpoint ? ` at ${config.objectStorage.endpoint}` : ''}`);
  const cluster = stores.backend === 'postgres' ? { node: `${os.hostname()}-${crypto.randomBytes(4).toString('hex')}` } : undefined;
  if (cluster) log.info({ component: 'stores' }, `PostgreSQL store: this node is ${cluster.node} of the cluster sharing it`);
  // Every node must serve every node's images: a node that cannot see them refuses to start.
  if (cluster) await proveFilesShared(files.markers(), stores.shared);
  const adminToken = cluster ? await sharedAdminToken(stores.shared, config.dataDir) : loadOrCreateAdminToken(config.dataDir);
  const secrets = cluster ? await SecretBox.shared(stores.shared, config.dataDir) : SecretBox.forDataDir(config.dataDir);
  settings.sealWith(secrets);
  const evidenceKey = cluster ? await EvidenceKey.shared(stores.shared, config.dataDir) : EvidenceKey.forDataDir(config.dataDir);
  return { files, stores, settings, cluster, adminToken, secrets, evidenceKey };
}

/** The egress guard (following the settings), its proxy, and the capture engine behind it. */
async function startEgress(
  config: Readonly<Config>,
  deps: ServiceDeps,
  settings: SettingsService,
  log: Logger,
  metrics: ServiceMetrics,
  steps: LifecycleStep[],
  authorities: TrustedAuthorities,
  upstream: UpstreamProxy | undefined,
) {
  const egress = createEgressPolicy({ allow: allowedRanges(settings.get()), denyLan: settings.get().egress_deny_lan }, { resolve: deps.resolve });
  settings.onChange((s) => egress.update({ allow: allowedRanges(s), denyLan: s.egress_deny_lan }));
  const proxy: EgressProxy = await startEgressProxy({
    policy: egress,
    upstream,
    log: log.child({ component: 'egress' }),
    onDenied: (denial) => metrics.egressDenied(denial),
  });
  steps.push({ name: 'the egress proxy', stop: () => proxy.close() });
  const events = metrics.engineEvents;
  const engine =
    typeof deps.engine === 'function' ? deps.engine({ proxyServer: proxy.url, events, trustedCertificates: authorities.certificates }) : deps.engine ?? chromiumEngines(config, proxy.url, log, events, authorities);
  return { egress, proxy, engine };
}

interface MonitorParts {
  stores: Stores;
  jobs: JobService;
  files: FileStore;
  webhooks: WebhookService;
  quota: QuotaService;
  secrets: SecretBox;
  settings: SettingsService;
  clock: Clock;
  log: Logger;
  pollMs: number | undefined;
  chat: ChatNotifier;
  email: EmailNotifier;
}

/** Monitors: their service, their checks (ordinary jobs) and the scheduler that runs them. */
function buildMonitors({ stores, jobs, files, webhooks, quota, secrets, settings, clock, log, pollMs, chat, email }: MonitorParts) {
  const monitorLog = log.child({ component: 'monitors' });
  // The checks and the service need each other (a check reads its monitor's capture; the service runs a check now): a cycle kept inside the monitors.
  const monitorChecks: MonitorChecks = new MonitorChecks({
    store: stores.monitors,
    accounts: stores.accounts,
    keys: stores.keys,
    jobs,
    files,
    webhooks,
    charge: (account, count, create) => quota.chargeFor(account, count, create),
    paramsOf: (monitor) => monitors.paramsOf(monitor),
    chatUrlsOf: (monitor) => monitors.chatUrlsOf(monitor),
    clock,
    log: monitorLog,
    chat,
    email,
  });
  const monitors: MonitorService = new MonitorService({
    store: stores.monitors,
    checks: monitorChecks,
    secrets,
    parseCapture: (body) => parseScreenshotParams(body),
    minMinutes: () => settings.get().monitor_min_minutes ?? 1,
    maxPerAccount: () => settings.get().monitors_per_account ?? 100,
    clock,
  });
  const scheduler = new MonitorScheduler({
    store: stores.monitors,
    checks: monitorChecks,
    clock,
    log: monitorLog,
    pollMs,
    retentionMs: () => settings.get().retention_days * 86_400_000,
    historyMs: () => settings.get().history_days * 86_400_000,
  });
  return { monitors, monitorChecks, scheduler };
}

/** Cluster mode: another node's panel may change the settings, and a dead node may leave webhooks due; a node reads both again every few seconds. */
function clusterPolls(settings: SettingsService, endWebhooks: ReturnType<typeof jobEndWebhooks>, clock: Clock, log: Logger): LifecycleStep[] {
  const every = (name: string, ms: number, read: () => Promise<unknown>, failed: string): LifecycleStep => {
    let timer: NodeJS.Timeout | undefined;
    return {
      name,
      start: () => {
        timer = setInterval(() => void read().catch((err: unknown) => log.warn({ component: name, err }, failed)), ms);
        timer.unref();
      },
      stop: () => clearInterval(timer),
    };
  };
  return [
    every('settings', SETTINGS_POLL_MS, () => settings.refresh(), 'could not read the settings'),
    every('webhooks', WEBHOOK_DUE_POLL_MS, () => endWebhooks.recover(clock.now() - WEBHOOK_DUE_GRACE_MS), 'could not read the webhooks due'),
  ];
}

/** Logs how many things a start step found left over, when it found any. */
async function logCount(log: Logger, component: string, counted: Promise<number>, message: (count: number) => string): Promise<void> {
  const count = await counted;
  if (count) log.info({ component }, message(count));
}

/** Stopped after everything that writes to the stores, before they close: compacts them and counts the jobs left waiting. */
function compactAtStop(stores: Stores, log: Logger, waiting: (count: number | undefined) => void): LifecycleStep {
  return {
    name: 'the stores compaction',
    stop: async () => {
      await stores.compact().catch((err: unknown) => log.error({ component: 'stores', err }, 'compacting the stores failed'));
      waiting(await stores.jobs.count({ status: UNFINISHED_STATUSES }).catch(() => undefined));
    },
  };
}

/**
 * The headless engine: `config.browsers` Chromium processes sharing the captures (EnginePool),
 * or one ChromiumEngine when it is 1. One browser keeps two contexts ready; in a pool each keeps
 * one, so the pool holds as many spares as it has browsers.
 */
function chromiumEngines(config: Readonly<Config>, proxyServer: string, logger: Logger, events: EngineEvents, authorities: TrustedAuthorities): CaptureEngine {
  const log = logger.child({ component: 'capture' });
  const executablePath = findChromium(config.chromiumPath);
  const engine = (prewarm?: number) =>
    new ChromiumEngine({
      executablePath,
      recycleAfter: config.recycleAfter,
      proxyServer,
      trustedCertificates: authorities.certificates,
      log,
      events,
      prewarm,
      pageMemoryMb: config.pageMemoryMb,
    });
  if (config.browsers === 1) return engine();
  return new EnginePool(Array.from({ length: config.browsers }, () => engine(1)));
}
