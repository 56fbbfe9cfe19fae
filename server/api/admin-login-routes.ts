import type Router from '@koa/router';

import type { AccountService } from '../auth/accounts.js';
import { type LoginService, loginView } from '../logins/login-service.js';

/**
 * An account's saved logins for the admin API: `GET /admin/api/accounts/:id/logins` lists them
 * (never a credential or a session), `DELETE /admin/api/logins/:id` removes one and erases its
 * session. Registered on the admin router (prefix `/admin/api`, behind the admin token).
 */
export function adminLoginRoutes(router: Router, logins: LoginService, accounts: AccountService): void {
  router.get('/accounts/:id/logins', async (ctx) => {
    await accounts.get(ctx.params.id);
    ctx.body = { logins: (await logins.list(ctx.params.id)).map(loginView) };
  });
  router.delete('/logins/:id', async (ctx) => {
    await logins.removeAny(ctx.params.id);
    ctx.status = 204;
  });
}
