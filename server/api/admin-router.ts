import type { Context, Middleware } from 'koa';

import { adminAuth, type AdminAuthDeps, adminNetworkGuard } from './admin-auth.js';
import { jsonBodyReader } from './json-body.js';
import { GatedRouter } from './routing.js';

/** Admin API answers are private to the admin and never cached, whatever their status. */
async function adminHeaders(ctx: Context, next: () => Promise<unknown>) {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  await next();
}

/**
 * Admin bodies are accounts, keys, monitors and settings: 256 KB is far past the largest. The
 * saved logins' routes take an imported session, which is as large as `POST /v1/logins` takes.
 */
export const ADMIN_BODY_KB = 256;

const adminBody = jsonBodyReader(ADMIN_BODY_KB);

/**
 * A router for /admin/api whose every route runs, in its own middleware (GatedRouter), the admin
 * network rule, the private headers, the admin token (`withToken`, the default) and then the
 * JSON body parser (`body`, ADMIN_BODY_KB by default), so the body is read only after the checks.
 */
export function adminApiRouter(deps: AdminAuthDeps, { withToken = true, body = adminBody }: { withToken?: boolean; body?: Middleware } = {}): GatedRouter {
  const network = adminNetworkGuard(deps);
  return new GatedRouter('/admin/api', withToken ? [network, adminHeaders, adminAuth(deps), body] : [network, adminHeaders, body]);
}
