import type Router from '@koa/router';

import { type LoginService, loginView } from '../logins/login-service.js';
import { badRequest } from './error-responses.js';
import { jsonBody, requestBody } from './json-body.js';
import { exactRouter } from './routing.js';
import { v1Auth, type V1State } from './v1-auth.js';
import type { V1Deps } from './v1-jobs.js';

export interface LoginRouteDeps extends V1Deps {
  logins: LoginService;
}

/**
 * /v1/logins: an account's saved logins, behind the same chain as POST /v1/screenshot. An
 * answer shows a login's name, type, site and state, never its user name, password or session;
 * another account's login is 404.
 */
export function loginRoutes(deps: LoginRouteDeps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);
  const json = async (ctx: { is(type: string): string | false | null }, next: () => Promise<unknown>) => {
    if (!ctx.is('application/json')) throw badRequest('Content-Type must be application/json');
    await next();
  };
  const accountOf = (state: unknown) => (state as { v1: V1State }).v1.account._id;

  router.post('/logins', auth, json, jsonBody, async (ctx) => {
    ctx.status = 201;
    ctx.body = loginView(await deps.logins.create(accountOf(ctx.state), requestBody(ctx)));
  });

  router.get('/logins', auth, async (ctx) => {
    ctx.body = { logins: (await deps.logins.list(accountOf(ctx.state))).map(loginView) };
  });

  router.get('/logins/:id', auth, async (ctx) => {
    ctx.body = loginView(await deps.logins.get(accountOf(ctx.state), ctx.params.id));
  });

  router.patch('/logins/:id', auth, json, jsonBody, async (ctx) => {
    ctx.body = loginView(await deps.logins.update(accountOf(ctx.state), ctx.params.id, requestBody(ctx)));
  });

  router.delete('/logins/:id', auth, async (ctx) => {
    await deps.logins.remove(accountOf(ctx.state), ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
