import type { Context, Next } from 'koa';

import { type AdminSessions, SESSION_LIFETIME_MS } from '../auth/admin-sessions.js';
import { secretEquals } from '../auth/admin-token.js';
import { clientAddress } from '../auth/client-address.js';
import { isAllowed } from '../ip-whitelist.js';
import { ApiError } from './error-responses.js';

export const SESSION_COOKIE = 'sa_admin';
export const CSRF_HEADER = 'X-Requested-With';
export const CSRF_VALUE = 'screenshot-appliance';

export interface AdminAuthDeps {
  token: string;
  adminAllow: readonly string[];
  trustProxy: readonly string[];
  /** The control panel's sessions; without them only the bearer token is accepted (as /metrics does). */
  sessions?: AdminSessions;
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
  return async (ctx: Context, next: Next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'))?.[1]?.trim();
    if (bearer) {
      if (!secretEquals(bearer, deps.token)) throw new ApiError(401, 'Invalid admin token');
      return next();
    }
    if (!deps.sessions?.isOpen(ctx.cookies.get(SESSION_COOKIE))) {
      throw new ApiError(401, 'Admin token required: send Authorization: Bearer <token> (the token is in <data>/admin-token)');
    }
    if (!['GET', 'HEAD', 'OPTIONS'].includes(ctx.method) && ctx.get(CSRF_HEADER) !== CSRF_VALUE) {
      throw new ApiError(403, `State-changing admin requests need the header ${CSRF_HEADER}: ${CSRF_VALUE}`, 'Access denied');
    }
    return next();
  };
}

/**
 * Opens a session for a valid token and sets its cookie (POST /admin/api/session): a random id,
 * HttpOnly, SameSite=Strict, for /admin only, lasting as long as the session.
 */
export function openSession(ctx: Context, token: string, sessions: AdminSessions, presented: unknown): void {
  if (typeof presented !== 'string' || !secretEquals(presented, token)) throw new ApiError(401, 'Invalid admin token');
  ctx.cookies.set(SESSION_COOKIE, sessions.open(), {
    httpOnly: true,
    sameSite: 'strict',
    path: '/admin',
    maxAge: SESSION_LIFETIME_MS,
    overwrite: true,
  });
  ctx.status = 204;
}

/** Ends the cookie's session, so the cookie opens nothing any more, and clears it (DELETE /admin/api/session). */
export function closeSession(ctx: Context, sessions: AdminSessions): void {
  sessions.close(ctx.cookies.get(SESSION_COOKIE));
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/admin', expires: new Date(0) });
  ctx.status = 204;
}
