import type Router from '@koa/router';

import type { AccountService } from '../auth/accounts.js';
import type { ApiKeyService } from '../auth/api-keys.js';
import { AdminMonitorCreate, MonitorChecksQuery } from '../contract/monitors.js';
import { validateBody, validateQuery } from '../contract/validate.js';
import { ValidationError } from '../domain-errors.js';
import { statusUrl } from '../jobs/job-resource.js';
import type { LoginService } from '../logins/login-service.js';
import type { MonitorService } from '../monitors/monitor-service.js';
import type { SettingsService } from '../settings.js';
import type { FileStore } from '../store/file-store.js';
import type { AdminAuthDeps } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';
import { baseUrlOf } from './base-url.js';
import { requestBody as body } from './json-body.js';
import { checkView, monitorView } from './monitor-views.js';

export interface AdminMonitorDeps extends AdminAuthDeps {
  accounts: AccountService;
  keys: ApiKeyService;
  monitors: MonitorService;
  logins: LoginService;
  files: FileStore;
  settings: SettingsService;
}

/**
 * /admin/api/monitors — every account's monitors for the control panel: the same service and
 * views as /v1/monitors, the account named in the body (its checks are jobs of its oldest key
 * that is not revoked).
 */
export function adminMonitorRoutes(deps: AdminMonitorDeps): Router {
  const router = adminApiRouter(deps);
  const view = async (monitor: Parameters<typeof monitorView>[0]) => monitorView(await deps.monitors.shown(monitor), await deps.monitors.lastCheck(monitor._id));

  router.get('/monitors', async (ctx) => {
    const accounts = await deps.accounts.list();
    const monitors = (await Promise.all(accounts.map((a) => deps.monitors.list(a._id)))).flat().sort((a, b) => a.created_at - b.created_at);
    ctx.body = { monitors: await Promise.all(monitors.map(view)) };
  });

  router.post('/monitors', async (ctx) => {
    const { account_id: accountId, ...request } = validateBody(AdminMonitorCreate, body(ctx)) as { account_id: string } & Record<string, unknown>;
    const account = await deps.accounts.get(accountId);
    const key = (await deps.keys.list(account._id)).find((k) => !k.revoked);
    if (!key) throw new ValidationError('account_id names an account without an API key that is not revoked; a check is a job of one of its keys', 'account_id');
    // A saved login the monitor names must be its account's, as on /v1/monitors.
    await deps.logins.requireIfNamed(account._id, request);
    const monitor = await deps.monitors.create({ account_id: account._id, key_id: key._id }, request, baseUrlOf(ctx, deps.settings));
    ctx.status = 201;
    ctx.body = monitorView(await deps.monitors.shown(monitor), null);
  });

  router.patch('/monitors/:id', async (ctx) => {
    const monitor = await deps.monitors.find(ctx.params.id);
    await deps.logins.requireIfNamed(monitor.account_id, body(ctx));
    ctx.body = await view(await deps.monitors.update(monitor.account_id, monitor._id, body(ctx)));
  });

  router.delete('/monitors/:id', async (ctx) => {
    const monitor = await deps.monitors.find(ctx.params.id);
    await deps.monitors.remove(monitor.account_id, monitor._id, (check) => deps.files.removeImage(check.diff_file!));
    ctx.status = 204;
  });

  router.post('/monitors/:id/run', async (ctx) => {
    const monitor = await deps.monitors.find(ctx.params.id);
    const [job] = await deps.monitors.run(monitor.account_id, monitor._id);
    ctx.status = 201;
    ctx.body = { job_id: job._id, status: 'pending', status_url: statusUrl(baseUrlOf(ctx, deps.settings), job._id) };
  });

  // The panel's Accept and Reject of the masks proposed from a monitor's first baseline.
  for (const decision of ['accept', 'reject'] as const) {
    router.post(`/monitors/:id/proposed-masks/${decision}`, async (ctx) => {
      const monitor = await deps.monitors.find(ctx.params.id);
      ctx.body = await view(await deps.monitors.decideProposedMasks(monitor.account_id, monitor._id, decision === 'accept'));
    });
  }

  router.get('/monitors/:id/checks', async (ctx) => {
    const monitor = await deps.monitors.find(ctx.params.id);
    const query = validateQuery(MonitorChecksQuery, ctx.query) as { limit: number; before?: string };
    const checks = await deps.monitors.checks(monitor.account_id, monitor._id, query);
    const base = baseUrlOf(ctx, deps.settings);
    ctx.body = { checks: checks.map((check) => checkView(check, base)), next_before: checks.length === query.limit ? checks[checks.length - 1]._id : null };
  });

  return router;
}
