import type Router from '@koa/router';
import type { Context } from 'koa';

import { IMAGE_CONTENT_TYPES } from '../capture/engine.js';
import { RENDER_CACHE_TTL_SECONDS } from '../contract/v1.js';
import { ValidationError } from '../domain-errors.js';
import { statusUrl } from '../jobs/job-resource.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { JobRecord } from '../store/records/job-record.js';
import { baseUrlOf } from './base-url.js';
import { ApiError } from './error-responses.js';
import { checkSignature, queryPairs, renderRequestBody } from './render-link.js';
import { exactRouter } from './routing.js';
import { parseScreenshotParams } from './screenshot-params.js';
import { sendImage } from './send-image.js';
import { type RateBudget, v1Auth, type V1State } from './v1-auth.js';
import { requestJobs, type V1Deps } from './v1-jobs.js';

interface RenderState {
  pairs: Array<[string, string]>;
}

export interface RenderDeps extends V1Deps {
  /** Loads per second of each render link (see linkBudget). */
  renderRateLimiter: RateLimiter;
}

/**
 * A render link's loads spend a budget of that link's own, never its account's requests per
 * second: a link in a busy public page, loaded by every reader (cache hits included), would
 * otherwise lock its owner out of the API. The link is named by its key and signature (in
 * lowercase, the way it is compared), which no reader can vary without breaking it. A load that
 * starts a capture still counts toward the daily and monthly limits.
 */
function linkBudget(limiter: RateLimiter, keyId: string, pairs: ReadonlyArray<readonly [string, string]>): RateBudget {
  const signature = pairs.find(([name]) => name === 'signature')![1].toLowerCase();
  return {
    limiter,
    id: `${keyId}:${signature}`,
    refusal: `Too many loads of this render link: the limit is ${limiter.limit} per second per link`,
  };
}

/**
 * GET /v1/render — a signed link that answers the picture itself, for an <img> on a dashboard
 * or a wiki. The link names its key by `key_id` and carries a signature of its parameters made
 * with the key's signing secret, so it can sit in a public page without the API key and nobody
 * can change what it asks for. Then the v1 chain applies as for POST /v1/screenshot.
 */
export function renderRoutes(deps: RenderDeps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps, async (ctx) => {
    // The query is read here, once: the signature is checked on these pairs and the capture asked for from them.
    const pairs = queryPairs(ctx.querystring);
    const keyId = pairs.find(([name]) => name === 'key_id')?.[1];
    if (!keyId) throw new ApiError(401, 'Missing key_id: a render link names its API key by key_id');
    const found = await deps.keys.forRenderLink(keyId);
    const account = found ? await deps.accounts.find(found.record.account_id) : null;
    if (!found || !account) throw new ApiError(401, 'Invalid API key');
    if (!found.secret) {
      throw new ApiError(403, 'This API key has no signing secret yet; rotate it in the control panel to sign render links', 'Invalid signature');
    }
    checkSignature(pairs, found.secret, deps.clock.now());
    (ctx.state as { render?: RenderState }).render = { pairs };
    return { key: found.record, account, budget: linkBudget(deps.renderRateLimiter, keyId, pairs) };
  });

  router.get('/render', auth, async (ctx) => {
    const { body, timeoutMs } = renderRequestBody((ctx.state as { render: RenderState }).render.pairs);
    const params = parseScreenshotParams(body, RENDER_CACHE_TTL_SECONDS);
    if (params.devices.length !== 1) throw new ValidationError('devices: a render link renders one device', 'devices');
    const base = baseUrlOf(ctx, deps.settings);
    const [{ job, cached }] = await requestJobs(deps, ctx.state.v1 as V1State, params, base);
    ctx.set('X-Cache', cached ? 'hit' : 'miss');
    ctx.set('X-Job-Id', job._id);
    const ended = (await deps.jobs.waitForEnd(job._id, timeoutMs)) ?? job;
    if (ended.status === 'completed' && ended.image_file) return serveImage(ctx, deps, ended, params.cache_ttl);
    if (ended.status === 'failed') {
      throw new ApiError(502, ended.error ?? 'The capture failed', 'Capture failed');
    }
    ctx.status = 202;
    ctx.set('Retry-After', String(Math.max(1, deps.queue.estimateSeconds(0))));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { job_id: ended._id, status: ended.status, status_url: statusUrl(base, ended._id) };
  });
  return router;
}

/**
 * The job's image, with an ETag naming this result and a lifetime in caches: what is left of
 * the result's cache_ttl, and never past the image's retention.
 */
async function serveImage(ctx: Context, deps: V1Deps, job: JobRecord, cacheTtl: number): Promise<void> {
  const name = job.image_file!;
  const now = deps.clock.now();
  const completed = job.completed_at ?? now;
  const until = Math.min(completed + cacheTtl * 1000, completed + deps.settings.get().retention_days * 86_400_000);
  return sendImage(
    ctx,
    await deps.files.image(name),
    IMAGE_CONTENT_TYPES[job.format],
    () => new ApiError(502, 'The captured image is no longer stored', 'Capture failed'),
    () => ({ ETag: `"${name.replace(/\.[a-z]+$/, '')}"`, 'Cache-Control': `private, max-age=${Math.max(0, Math.floor((until - now) / 1000))}` }),
  );
}
