import type Router from '@koa/router';

import { type ScreenshotCreated, ScreenshotQuery } from '../contract/v1.js';
import { validateQuery } from '../contract/validate.js';
import type { CreateParams } from '../jobs/create-params.js';
import { type IdempotentOutcome, requestFingerprint } from '../jobs/idempotent-requests.js';
import { statusUrl, toStatusResource } from '../jobs/job-resource.js';
import { formatIsoSeconds, nextUtcMidnight } from '../time.js';
import { baseUrlOf } from './base-url.js';
import { badRequest } from './error-responses.js';
import { idempotencyKeyOf } from './idempotency-key.js';
import { jsonBody, requestBody } from './json-body.js';
import { exactRouter } from './routing.js';
import { parseScreenshotParams } from './screenshot-params.js';
import { v1Auth, type V1State } from './v1-auth.js';
import { requestJobs, type V1Deps } from './v1-jobs.js';

/** POST /v1/screenshot, GET /v1/screenshot/:job_id and GET /v1/usage. */
export function v1Routes(deps: V1Deps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);

  router.post('/screenshot', auth, async (ctx, next) => {
    if (!ctx.is('application/json')) throw badRequest('Content-Type must be application/json');
    await next();
  }, jsonBody, async (ctx) => {
    const state = ctx.state.v1 as V1State;
    const key = idempotencyKeyOf(ctx.req.headers['idempotency-key']);
    const body = requestBody(ctx);
    // Taken before the body is parsed, which fills in its defaults.
    const fingerprint = key === undefined ? '' : requestFingerprint(body);
    const params = parseScreenshotParams(body);
    const base = baseUrlOf(ctx, deps.settings);
    const create = () => createScreenshots(deps, state, params, base);
    const { answer, replayed } =
      key === undefined
        ? { answer: (await create()).answer, replayed: false }
        : await deps.idempotency.once(state.account._id, 'POST /v1/screenshot', key, fingerprint, create);
    if (replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = answer.status;
    ctx.body = answer.body;
  });

  router.get('/screenshot/:job_id', auth, async (ctx) => {
    const { account } = ctx.state.v1 as V1State;
    const query = validateQuery(ScreenshotQuery, ctx.query);
    const asked = (value: string | undefined) => value === '1' || value === 'true';
    const job = await deps.jobs.getOwned(account._id, ctx.params.job_id);
    const completed = job.status === 'completed';
    const source = asked(query.include_source) && completed && job.has_page_source ? await deps.files.readSource(job._id) : undefined;
    const outputs = {
      markdown: asked(query.include_markdown) && completed && job.has_markdown ? await deps.files.readOutput(job._id, 'markdown') : undefined,
      text: asked(query.include_text) && completed && job.has_text ? await deps.files.readOutput(job._id, 'text') : undefined,
      links: asked(query.include_links) && completed && job.has_links ? parseLinks(await deps.files.readOutput(job._id, 'links')) : undefined,
    };
    ctx.body = toStatusResource(job, baseUrlOf(ctx, deps.settings), source, outputs);
  });

  router.get('/usage', auth, async (ctx) => {
    const { account } = ctx.state.v1 as V1State;
    const used = await deps.quota.usage(account._id);
    ctx.body = {
      calls_today: used.today,
      calls_this_month: used.month,
      daily_limit: account.daily_limit,
      monthly_limit: account.monthly_limit,
      reset_at: formatIsoSeconds(nextUtcMidnight(deps.clock.now())),
    };
  });

  return router;
}

/**
 * The jobs of one POST /v1/screenshot and its 201 answer; kept for a retry with the same
 * Idempotency-Key when it made a job (one served whole from the cache changed nothing).
 */
async function createScreenshots(deps: V1Deps, state: V1State, params: CreateParams, base: string): Promise<IdempotentOutcome> {
  // Jobs that could not be stored (a full disk) are not counted, nor results served from the cache.
  const requested = await requestJobs(deps, state, params, base);
  const made = requested.filter((r) => !r.cached);
  const kind = { fullPage: params.full_page, delayMs: params.options.delayMs ?? 0 };
  const estimate = made.length ? await deps.jobs.estimateFor(made[made.length - 1].job, made.length, kind) : deps.queue.estimateSeconds(1, kind);
  const withCache = params.cache_ttl > 0;
  const first = requested[0];
  const body: ScreenshotCreated = {
    job_id: first.job._id,
    status: first.cached ? (first.job.status as ScreenshotCreated['status']) : 'pending',
    ...(withCache ? { cached: first.cached } : {}),
    devices: params.devices,
    full_page: params.full_page,
    googlebot: params.googlebot,
    estimated_time_seconds: estimate,
    status_url: statusUrl(base, first.job._id),
    jobs: requested.map(({ job, cached }) => ({
      job_id: job._id,
      device: job.device,
      preset: job.preset,
      status_url: statusUrl(base, job._id),
      ...(withCache ? { cached } : {}),
    })),
  };
  return { answer: { status: 201, body }, keep: made.length > 0 };
}

/** A job's stored links (a JSON array of {url, text}), or null when the file is gone or unreadable. */
function parseLinks(stored: string | null): Array<{ url: string; text: string }> | null {
  if (stored === null) return null;
  try {
    const links: unknown = JSON.parse(stored);
    return Array.isArray(links) ? (links as Array<{ url: string; text: string }>) : null;
  } catch {
    return null;
  }
}
