import type { Context, Next } from 'koa';

import { LoggedPaths } from './access-log.js';
import { ApiError, ERROR_TITLES, notFound, toApiError } from './error-responses.js';

function methodNotAllowed(allow: string): ApiError {
  const message = allow ? `This method is not allowed on this address; allowed: ${allow}` : 'This method is not supported on this address';
  return new ApiError(405, message, ERROR_TITLES[405], {}, allow ? { Allow: allow } : {});
}

/**
 * The one error-rendering middleware. Known errors keep their status and message
 * (error-responses.ts); everything else becomes a 500 whose body never echoes internals, and is
 * logged with the address as the access log shows it (`paths`, the service's routes).
 */
export function errorMiddleware(log: (msg: string, err: unknown) => void, paths: LoggedPaths = new LoggedPaths([])) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw notFound(`No route for ${ctx.method} ${ctx.path}`);
        // The router's answers to a known path with another method: 405 (501 for a method
        // it does not know at all) with `Allow` already set.
        if (ctx.status === 405 || ctx.status === 501) throw methodNotAllowed(ctx.response.get('Allow'));
      }
    } catch (err) {
      const apiError = toApiError(err);
      // 503 (queue full) and 507 (disk full) are conditions, said once where they arise; a 500 is a fault.
      if (apiError.status >= 500 && apiError.status !== 503 && apiError.status !== 507) log(`${ctx.method} ${paths.of(ctx.path)} failed`, err);
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      // An error describes one moment; no cache should keep it.
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = { error: apiError.title, message: apiError.message, ...apiError.extra };
    }
  };
}
