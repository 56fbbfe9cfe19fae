import type Router from '@koa/router';

import type { AccountService } from '../auth/accounts.js';
import { type LoginService, loginView } from '../logins/login-service.js';
import type { AdminAuthDeps } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';
import { jsonBody, requestBody as body } from './json-body.js';

export interface AdminLoginDeps extends AdminAuthDeps {
  logins: LoginService;
  accounts: AccountService;
}

/**
 * An account's saved logins for the admin API: `GET /admin/api/accounts/:id/logins` lists them
 * (never a credential or a session), `POST` there creates one (the body and answer of
 * `POST /v1/logins`), `PATCH /admin/api/logins/:id` changes one (new credentials sign in afresh)
 * and `DELETE` removes one and erases its session. An admin router of its own (prefix
 * `/admin/api`, behind the admin token) whose bodies may be as large as a v1 body: an imported
 * session (a single-page app's localStorage) can be far larger than any other admin body.
 */
export function adminLoginRoutes({ logins, accounts, ...deps }: AdminLoginDeps): Router {
  const router = adminApiRouter(deps, { body: jsonBody });
  router.get('/accounts/:id/logins', async (ctx) => {
    await accounts.get(ctx.params.id);
    ctx.body = { logins: (await logins.list(ctx.params.id)).map(loginView) };
  });
  router.post('/accounts/:id/logins', async (ctx) => {
    await accounts.get(ctx.params.id);
    const login = await logins.create(ctx.params.id, body(ctx));
    ctx.status = 201;
    ctx.body = loginView(login);
  });
  router.patch('/logins/:id', async (ctx) => {
    ctx.body = loginView(await logins.updateAny(ctx.params.id, body(ctx)));
  });
  router.delete('/logins/:id', async (ctx) => {
    await logins.removeAny(ctx.params.id);
    ctx.status = 204;
  });
  return router;
}
