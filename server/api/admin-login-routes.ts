import type Router from '@koa/router';

import type { AccountService } from '../auth/accounts.js';
import { type LoginService, loginView } from '../logins/login-service.js';
import { requestBody as body } from './json-body.js';

/**
 * An account's saved logins for the admin API: `GET /admin/api/accounts/:id/logins` lists them
 * (never a credential or a session), `POST` there creates one (the body and answer of
 * `POST /v1/logins`), `PATCH /admin/api/logins/:id` changes one (new credentials sign in afresh)
 * and `DELETE` removes one and erases its session. Registered on the admin router (prefix
 * `/admin/api`, behind the admin token).
 */
export function adminLoginRoutes(router: Router, logins: LoginService, accounts: AccountService): void {
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
}
