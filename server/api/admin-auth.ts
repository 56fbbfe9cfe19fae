import type { Context, Next } from 'koa';

import { secretEquals, sessionValue } from '../auth/admin-token.js';
import { clientAddress } from '../auth/client-address.js';
import { isAllowed } from '../auth/ip-whitelist.js';
import { ApiError } from '../errors.js';

export const SESSION_COOKIE = 'sa_admin';
export const CSRF_HEADER = 'X-Requested-With';
export const CSRF_VALUE = 'screenshot-appliance';

export interface AdminAuthDeps {
  token: string;
  adminAllow: readonly string[];
  trustProxy: readonly string[];
}

/** /admin is for the local admin: refused from addresses outside `adminAllow` (loopback by default). */
export function adminNetworkGuard(deps: AdminAuthDeps) {
  return async (ctx: Context, next: Next) => {
    const ip = clientAddress(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, deps.trustProxy);
    if (!isAllowed(deps.adminAllow, ip)) {
      throw new ApiError(403, `The admin interface is not reachable from ${ip}`, 'Access denied');
    }
    await next();
  };
}

/**
 * The admin API accepts the bearer token, or the session cookie the panel got for it.
 * With the cookie, a state-changing request must also carry `X-Requested-With:
 * screenshot-appliance`: a cross-site form or fetch cannot add that header without a CORS
 * preflight, which this server never grants (SameSite=Strict is the first wall).
 */
export function adminAuth(deps: AdminAuthDeps) {
  const session = sessionValue(deps.token);
  return async (ctx: Context, next: Next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'))?.[1]?.trim();
    if (bearer) {
      if (!secretEquals(bearer, deps.token)) throw new ApiError(401, 'Invalid admin token');
      return next();
    }
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    if (!cookie || !secretEquals(cookie, session)) {
      throw new ApiError(401, 'Admin token required: send Authorization: Bearer <token> (the token is in <data>/admin-token)');
    }
    if (!['GET', 'HEAD', 'OPTIONS'].includes(ctx.method) && ctx.get(CSRF_HEADER) !== CSRF_VALUE) {
      throw new ApiError(403, `State-changing admin requests need the header ${CSRF_HEADER}: ${CSRF_VALUE}`, 'Access denied');
    }
    return next();
  };
}

/** Sets the session cookie for a valid token (POST /admin/api/session). */
export function openSession(ctx: Context, token: string, presented: unknown): void {
  if (typeof presented !== 'string' || !secretEquals(presented, token)) throw new ApiError(401, 'Invalid admin token');
  ctx.cookies.set(SESSION_COOKIE, sessionValue(token), { httpOnly: true, sameSite: 'strict', path: '/admin', overwrite: true });
  ctx.status = 204;
}

export function closeSession(ctx: Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/admin', expires: new Date(0) });
  ctx.status = 204;
}
