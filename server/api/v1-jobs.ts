import type { CreateParams } from '../jobs/create-params.js';
import type { IdempotentRequests } from '../jobs/idempotent-requests.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { JobService, RequestedJob } from '../jobs/job-service.js';
import type { LoginService } from '../logins/login-service.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { SettingsService } from '../settings.js';
import type { FileStore } from '../store/file-store.js';
import type { Clock } from '../time.js';
import type { StorageDestinations } from '../uploads/destinations.js';
import type { V1AuthDeps, V1State } from './v1-auth.js';

/** What the routes behind the v1 chain (POST /v1/screenshot, render links, MCP) are given. */
export interface V1Deps extends V1AuthDeps {
  jobs: JobService;
  /** The queue, for the estimates a response gives. */
  queue: JobQueue;
  /** Counts result-cache hits and misses. */
  metrics?: Pick<ServiceMetrics, 'cacheLookup'>;
  files: FileStore;
  settings: SettingsService;
  clock: Clock;
  /** Whether the account has a storage destination, for a request asking to upload. */
  destinations: StorageDestinations;
  /** What POST /v1/screenshot answered each Idempotency-Key, for its retries. */
  idempotency: IdempotentRequests;
  /** Whether the account has the saved login a request names. */
  logins: LoginService;
}

/**
 * The jobs a request gets for its account and key (new ones charged to the limits, cached ones
 * free), with the result cache's hits and misses counted when it asked for the cache.
 */
export async function requestJobs(deps: V1Deps, state: V1State, params: CreateParams, base: string): Promise<RequestedJob[]> {
  const { account, key } = state;
  if (params.options.upload) await deps.destinations.requireFor(account._id);
  if (params.options.login) await deps.logins.requireFor(account._id, params.options.login);
  const requested = await deps.jobs.request(account._id, key._id, params, base, (count, create) => deps.quota.chargeFor(account, count, create));
  if (params.cache_ttl > 0) for (const { cached } of requested) deps.metrics?.cacheLookup(cached);
  return requested;
}
