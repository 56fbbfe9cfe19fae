import type Koa from 'koa';

import type { Logger } from '../logger.js';

/** Image addresses are capabilities (the name is the only thing protecting the image). */
const IMAGE_PATH = /^\/v1\/files\/[^/]+$/;

/**
 * What a request's line shows of its address: the path without the query string, where an
 * API key, token or other secret may travel, and without an image's name, which grants
 * access to it. Headers (the key, the admin token, the session cookie) are never read.
 */
export function loggedPath(path: string): string {
  return IMAGE_PATH.test(path) ? '/v1/files/[image]' : path;
}

/**
 * One line per request, written once it is answered: method, path (see loggedPath), status,
 * duration and the account id when an API key identified one. Mounted first, so it times the
 * whole chain and sees the status the error middleware chose.
 */
export function accessLog(log: Logger): Koa.Middleware {
  const http = log.child({ component: 'http' });
  return async (ctx, next) => {
    const started = performance.now();
    let failed = false;
    try {
      await next();
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      const path = loggedPath(ctx.path);
      const status = failed ? 500 : ctx.status;
      const accountId = (ctx.state.v1 as { account?: { _id?: string } } | undefined)?.account?._id;
      http.info(
        {
          method: ctx.method,
          path,
          status,
          duration_ms: Math.round(performance.now() - started),
          ...(accountId ? { account_id: accountId } : {}),
        },
        `${ctx.method} ${path} ${status}`,
      );
    }
  };
}
