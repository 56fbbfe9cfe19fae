import Router from '@koa/router';
import type { Context } from 'koa';

import { type AccountService,accountView } from '../auth/accounts.js';
import type { AdminSessions } from '../auth/admin-sessions.js';
import { type ApiKeyService,keyView } from '../auth/api-keys.js';
import { type CaptureEngine, oneBrowser } from '../capture/engine.js';
import { AccountCreate, AccountUpdate, ApiKeyCreate, ApiKeyUpdate, JobsQuery, UsageQuery } from '../contract/admin.js';
import { type Filled, validateBody, validateQuery } from '../contract/validate.js';
import type { EvidenceKey } from '../crypto/evidence-key.js';
import { ValidationError } from '../domain-errors.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { screenshotUrl, toStatusResource } from '../jobs/job-resource.js';
import type { JobService } from '../jobs/job-service.js';
import type { QuotaService } from '../limits/quota.js';
import type { LoginService } from '../logins/login-service.js';
import type { SettingsService } from '../settings.js';
import type { FileStore } from '../store/file-store.js';
import { optionsView } from '../store/records/job-options.js';
import type { JobRecord } from '../store/records/job-record.js';
import { formatIsoSeconds } from '../time.js';
import type { StorageDestinations } from '../uploads/destinations.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import type { AdminAuthDeps } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';
import { adminStorageRoutes } from './admin-storage-routes.js';
import { adminWebhookRoutes } from './admin-webhooks.js';
import { baseUrlOf } from './base-url.js';
import { ApiError } from './error-responses.js';
import { requestBody as body } from './json-body.js';
import { queryText, refuseSecretOptions, renderTimeoutSeconds, signedRenderUrl } from './render-link.js';
import { parseScreenshotParams } from './screenshot-params.js';

export interface AdminDeps extends AdminAuthDeps {
  sessions: AdminSessions;
  accounts: AccountService;
  keys: ApiKeyService;
  quota: QuotaService;
  jobs: JobService;
  /** The queue: its state, pause and resume. */
  queue: JobQueue;
  files: FileStore;
  settings: SettingsService;
  engine: CaptureEngine;
  webhooks: WebhookService;
  destinations: StorageDestinations;
  /** Its public key is shown with the status. */
  evidenceKey: Pick<EvidenceKey, 'publicKey'>;
  logins: LoginService;
}

/**
 * /admin/api/* — accounts, keys, jobs, usage, settings, the queue and webhook deliveries, for
 * the control panel and scripts, behind the admin network rule and the admin token (checked in
 * every route's own middleware, see adminApiRouter; the body is read only after them).
 */
export function adminRoutes(deps: AdminDeps): Router {
  const router = adminApiRouter(deps);

  const withUsage = async (account: Awaited<ReturnType<AccountService['get']>>) =>
    accountView(account, await deps.quota.usage(account._id));

  const adminJob = async (ctx: Context, job: JobRecord, emails: Map<string, string>) => ({
    ...toStatusResource(job, baseUrlOf(ctx, deps.settings)),
    account_id: job.account_id,
    email: emails.get(job.account_id) ?? null,
    device: job.device,
    format: job.format,
    callback_url: job.callback_url,
    options: optionsView(job.options, job.secret_names),
    ...(job.status === 'completed' && job.image_file && !job.expired && job.format !== 'pdf'
      ? { thumbnail_url: `${screenshotUrl(baseUrlOf(ctx, deps.settings), job.image_file)}/thumbnail` }
      : {}),
    duration_ms: job.duration_ms,
    blocked_requests: job.blocked_requests,
    expired: job.expired,
  });

  const emailMap = async () => new Map((await deps.accounts.list()).map((a) => [a._id, a.email]));

  router.get('/status', async (ctx) => {
    const hourly = await deps.jobs.hourly(24);
    ctx.body = {
      queue: deps.queue.stats(),
      engine: engineStatus(deps.engine),
      captures_per_hour: hourly.map((h) => ({ hour: formatIsoSeconds(h.hour), completed: h.completed, failed: h.failed })),
      api_base_url: `${baseUrlOf(ctx, deps.settings)}/v1`,
      evidence_public_key: deps.evidenceKey.publicKey,
    };
  });
  router.post('/queue/pause', (ctx) => {
    deps.queue.pause();
    ctx.body = deps.queue.stats();
  });
  router.post('/queue/resume', (ctx) => {
    deps.queue.resume();
    ctx.body = deps.queue.stats();
  });

  router.get('/accounts', async (ctx) => {
    ctx.body = { accounts: await Promise.all((await deps.accounts.list()).map(withUsage)) };
  });
  router.post('/accounts', async (ctx) => {
    ctx.status = 201;
    const input = validateBody(AccountCreate, body(ctx)) as Filled<AccountCreate, 'plan' | 'email_verified'>;
    ctx.body = await withUsage(await deps.accounts.create(input));
  });
  router.get('/accounts/:id', async (ctx) => {
    ctx.body = await withUsage(await deps.accounts.get(ctx.params.id));
  });
  router.patch('/accounts/:id', async (ctx) => {
    ctx.body = await withUsage(await deps.accounts.update(ctx.params.id, validateBody(AccountUpdate, body(ctx))));
  });
  router.delete('/accounts/:id', async (ctx) => {
    await deps.accounts.remove(ctx.params.id);
    await deps.keys.revokeAll(ctx.params.id);
    await deps.destinations.forget(ctx.params.id);
    await deps.logins.forget(ctx.params.id);
    ctx.status = 204;
  });
  router.get('/accounts/:id/webhook-secret', async (ctx) => {
    ctx.body = { secret: await deps.accounts.webhookSecret(ctx.params.id) };
  });
  router.post('/accounts/:id/webhook-secret', async (ctx) => {
    ctx.body = { secret: await deps.accounts.rotateWebhookSecret(ctx.params.id) };
  });

  router.get('/accounts/:id/keys', async (ctx) => {
    await deps.accounts.get(ctx.params.id);
    ctx.body = { keys: (await deps.keys.list(ctx.params.id)).map(keyView) };
  });
  router.post('/accounts/:id/keys', async (ctx) => {
    const account = await deps.accounts.get(ctx.params.id);
    const input = validateBody(ApiKeyCreate, body(ctx)) as Filled<ApiKeyCreate, 'name' | 'ip_whitelist'>;
    const { key, signingSecret, record } = await deps.keys.create(account, input);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...keyView(record), key, signing_secret: signingSecret };
  });
  router.post('/keys/:id/signing-secret', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { signing_secret: await deps.keys.rotateSigningSecret(ctx.params.id) };
  });
  // A render link signed by the service with the key's secret, for the panel to copy.
  router.post('/keys/:id/render-link', async (ctx) => {
    const request = body(ctx);
    // Checked as a POST /v1/screenshot body would be (the link's own expires and render_timeout
    // as its query would be), so a link that could only be refused is not made.
    const { expires, render_timeout: renderTimeout, ...options } = (request ?? {}) as Record<string, unknown>;
    // Before the parse, which fills in the defaults (evidence: false among them).
    refuseSecretOptions(Object.keys(options));
    parseScreenshotParams(options);
    if (renderTimeout !== undefined) renderTimeoutSeconds(queryText('render_timeout', renderTimeout));
    if (expires !== undefined && !(Number.isInteger(expires) && (expires as number) > 0)) throw new ValidationError('expires must be a Unix time in seconds', 'expires');
    const found = await deps.keys.forRenderLink(ctx.params.id);
    if (!found) throw new ValidationError('the key is revoked; a revoked key signs no render links', 'key_id');
    if (!found.secret) throw new ValidationError('the key has no signing secret yet; rotate it first', 'key_id');
    const params = Object.fromEntries(Object.entries(request as Record<string, unknown>).map(([name, value]) => [name, queryText(name, value)]));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { render_url: signedRenderUrl(baseUrlOf(ctx, deps.settings), found.record._id, found.secret, params) };
  });
  router.get('/keys/:id', async (ctx) => {
    ctx.body = keyView(await deps.keys.get(ctx.params.id));
  });
  router.patch('/keys/:id', async (ctx) => {
    ctx.body = keyView(await deps.keys.update(ctx.params.id, validateBody(ApiKeyUpdate, body(ctx))));
  });
  router.delete('/keys/:id', async (ctx) => {
    await deps.keys.remove(ctx.params.id);
    ctx.status = 204;
  });

  router.get('/jobs', async (ctx) => {
    const query = validateQuery(JobsQuery, ctx.query) as Filled<JobsQuery, 'limit'>;
    const { limit } = query;
    const jobs = await deps.jobs.list(query);
    const emails = await emailMap();
    ctx.body = {
      jobs: await Promise.all(jobs.map((job) => adminJob(ctx, job, emails))),
      next_before: jobs.length === limit ? jobs[jobs.length - 1]._id : null,
    };
  });
  router.get('/jobs/:id', async (ctx) => {
    const job = await deps.jobs.find(ctx.params.id);
    if (!job) throw new ApiError(404, `No job ${ctx.params.id}`);
    ctx.body = await adminJob(ctx, job, await emailMap());
  });
  router.get('/jobs/:id/source', async (ctx) => {
    const job = await deps.jobs.find(ctx.params.id);
    const source = job?.has_page_source ? await deps.files.readSource(job._id) : null;
    if (source === null) throw new ApiError(404, `No page source stored for job ${ctx.params.id}`);
    // Plain text: captured HTML must never run on the admin's origin.
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.body = source;
  });

  router.get('/jobs/:id/markdown', async (ctx) => {
    const job = await deps.jobs.find(ctx.params.id);
    const markdown = job?.has_markdown ? await deps.files.readOutput(job._id, 'markdown') : null;
    if (markdown === null) throw new ApiError(404, `No Markdown stored for job ${ctx.params.id}`);
    // Plain text, like the source: the panel renders it itself, escaped.
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.body = markdown;
  });

  router.get('/usage', async (ctx) => {
    const { days, account_id: accountId } = validateQuery(UsageQuery, ctx.query) as Filled<UsageQuery, 'days'>;
    if (accountId) await deps.accounts.get(accountId);
    const accounts = accountId ? [] : await deps.accounts.list();
    ctx.body = {
      days: await deps.quota.daily(accountId, days),
      accounts: await Promise.all(
        accounts.map(async (a) => ({ account_id: a._id, email: a.email, days: await deps.quota.daily(a._id, days) })),
      ),
    };
  });

  router.get('/settings', (ctx) => {
    ctx.body = deps.settings.get();
  });
  router.put('/settings', async (ctx) => {
    ctx.body = await deps.settings.update(body(ctx));
  });

  adminWebhookRoutes(router, deps.webhooks);
  adminStorageRoutes(router, deps.destinations);
  return router;
}

/** The engine as `GET /admin/api/status` reports it. */
function engineStatus(engine: CaptureEngine) {
  const ready = engine.isReady();
  const browsers = engine.browsers?.() ?? oneBrowser(ready);
  return {
    name: engine.name,
    version: ready ? engine.chromiumVersion() : null,
    ready,
    browsers: browsers.total,
    browsers_ready: browsers.ready,
  };
}
