import type { Context } from 'koa';

import { adminAuth, type AdminAuthDeps, adminNetworkGuard } from './admin-auth.js';
import { jsonBodyReader } from './json-body.js';
import { GatedRouter } from './routing.js';

/** Admin API answers are private to the admin and never cached, whatever their status. */
async function adminHeaders(ctx: Context, next: () => Promise<unknown>) {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  await next();
}

/** Admin bodies are accounts, keys and settings: 256 KB is far past the largest. */
export const ADMIN_BODY_KB = 256;

const jsonBody = jsonBodyReader(ADMIN_BODY_KB);

/**
 * A router for /admin/api whose every route runs, in its own middleware (GatedRouter), the admin
 * network rule, the private headers, the admin token (`withToken`, the default) and then the
 * JSON body parser, so the body is read only after the checks.
 */
export function adminApiRouter(deps: AdminAuthDeps, withToken = true): GatedRouter {
  const network = adminNetworkGuard(deps);
  return new GatedRouter('/admin/api', withToken ? [network, adminHeaders, adminAuth(deps), jsonBody] : [network, adminHeaders, jsonBody]);
}
