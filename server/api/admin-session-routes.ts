import type Router from '@koa/router';

import type { AdminSessions } from '../auth/admin-sessions.js';
import { SessionOpen } from '../contract/admin.js';
import { validateBody } from '../contract/validate.js';
import { type AdminAuthDeps, closeSession, openSession } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';
import { requestBody as body } from './json-body.js';

export interface AdminSessionDeps extends AdminAuthDeps {
  sessions: AdminSessions;
}

/**
 * POST and DELETE /admin/api/session: the control panel exchanges the admin token for a session
 * cookie, behind the admin network rule only (the token is what it checks).
 */
export function adminSessionRoutes(deps: AdminSessionDeps): Router {
  const router = adminApiRouter(deps, { withToken: false });
  router.post('/session', (ctx) => openSession(ctx, deps.token, deps.sessions, validateBody(SessionOpen, body(ctx)).token));
  router.delete('/session', (ctx) => closeSession(ctx, deps.sessions));
  return router;
}
