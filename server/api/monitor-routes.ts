import type Router from '@koa/router';

import { MonitorChecksQuery } from '../contract/monitors.js';
import { validateQuery } from '../contract/validate.js';
import { statusUrl } from '../jobs/job-resource.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { diffFileOf } from '../monitors/monitor-checks.js';
import type { MonitorService } from '../monitors/monitor-service.js';
import { baseUrlOf } from './base-url.js';
import { badRequest, notFound } from './error-responses.js';
import { capability } from './file-routes.js';
import { jsonBody, requestBody } from './json-body.js';
import { checkView, monitorView } from './monitor-views.js';
import { exactRouter } from './routing.js';
import { v1Auth, type V1State } from './v1-auth.js';
import type { V1Deps } from './v1-jobs.js';

export interface MonitorRouteDeps extends V1Deps {
  monitors: MonitorService;
  /** Image requests per second per client address (the diff pictures count with the screenshots). */
  fileRateLimiter: RateLimiter;
  trustProxy: readonly string[];
}

/**
 * /v1/monitors: scheduled captures compared with a baseline, behind the same chain as POST
 * /v1/screenshot (key, IP whitelist, e-mail, plan, requests per second; a check's jobs count
 * against the limits when they are made). Another account's monitor is 404. And
 * GET /v1/files/{name}/diff, a check's diff picture under its screenshot's capability name.
 */
export function monitorRoutes(deps: MonitorRouteDeps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);
  const json = async (ctx: { is(type: string): string | false | null }, next: () => Promise<unknown>) => {
    if (!ctx.is('application/json')) throw badRequest('Content-Type must be application/json');
    await next();
  };
  const owner = (state: unknown) => (state as { v1: V1State }).v1;
  const viewOf = async (monitor: Parameters<typeof monitorView>[0]) => monitorView(await deps.monitors.shown(monitor), await deps.monitors.lastCheck(monitor._id));

  router.post('/monitors', auth, json, jsonBody, async (ctx) => {
    const { account, key } = owner(ctx.state);
    // A saved login the monitor names must be the account's, as for a screenshot (its checks would all fail otherwise).
    await deps.logins.requireIfNamed(account._id, requestBody(ctx));
    const monitor = await deps.monitors.create({ account_id: account._id, key_id: key._id }, requestBody(ctx), baseUrlOf(ctx, deps.settings));
    ctx.status = 201;
    ctx.body = monitorView(await deps.monitors.shown(monitor), null);
  });

  router.get('/monitors', auth, async (ctx) => {
    const monitors = await deps.monitors.list(owner(ctx.state).account._id);
    ctx.body = { monitors: await Promise.all(monitors.map(viewOf)) };
  });

  router.get('/monitors/:id', auth, async (ctx) => {
    ctx.body = await viewOf(await deps.monitors.get(owner(ctx.state).account._id, ctx.params.id));
  });

  router.patch('/monitors/:id', auth, json, jsonBody, async (ctx) => {
    await deps.logins.requireIfNamed(owner(ctx.state).account._id, requestBody(ctx));
    ctx.body = await viewOf(await deps.monitors.update(owner(ctx.state).account._id, ctx.params.id, requestBody(ctx)));
  });

  router.delete('/monitors/:id', auth, async (ctx) => {
    await deps.monitors.remove(owner(ctx.state).account._id, ctx.params.id, (check) => deps.files.removeImage(check.diff_file!));
    ctx.status = 204;
  });

  router.post('/monitors/:id/run', auth, async (ctx) => {
    const { account, key } = owner(ctx.state);
    const [job] = await deps.monitors.run(account._id, ctx.params.id, key._id);
    ctx.status = 201;
    ctx.body = { job_id: job._id, status: 'pending', status_url: statusUrl(baseUrlOf(ctx, deps.settings), job._id) };
  });

  router.get('/monitors/:id/checks', auth, async (ctx) => {
    const query = validateQuery(MonitorChecksQuery, ctx.query) as { limit: number; before?: string };
    const checks = await deps.monitors.checks(owner(ctx.state).account._id, ctx.params.id, query);
    const base = baseUrlOf(ctx, deps.settings);
    ctx.body = { checks: checks.map((check) => checkView(check, base)), next_before: checks.length === query.limit ? checks[checks.length - 1]._id : null };
  });

  router.post('/monitors/:id/checks/:job_id/pin', auth, async (ctx) => {
    ctx.body = await viewOf(await deps.monitors.pin(owner(ctx.state).account._id, ctx.params.id, ctx.params.job_id));
  });

  router.post('/monitors/:id/proposed-masks/accept', auth, async (ctx) => {
    ctx.body = await viewOf(await deps.monitors.decideProposedMasks(owner(ctx.state).account._id, ctx.params.id, true));
  });

  router.post('/monitors/:id/proposed-masks/reject', auth, async (ctx) => {
    ctx.body = await viewOf(await deps.monitors.decideProposedMasks(owner(ctx.state).account._id, ctx.params.id, false));
  });

  // No key: the screenshot's 144-bit name is the capability, as for the screenshot itself.
  router.get('/files/:name/diff', async (ctx) => {
    const { name, maxAge } = await capability(ctx, deps, 'diff picture');
    const diff = await deps.files.readImage(diffFileOf(name));
    if (!diff) throw notFound('No such diff picture; a check whose picture did not differ has none, and they are removed with the screenshot');
    ctx.set('Cache-Control', `private, max-age=${maxAge}, immutable`);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'image/png';
    ctx.body = diff;
  });

  return router;
}
