import type { Context, Next } from 'koa';

import { LoggedPaths } from './api/access-log.js';

/** Public titles for each status, as the v1 specification and DESIGN.md name them. */
export const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Access denied',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Rate limit exceeded',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
  507: 'Insufficient storage',
};

/**
 * An error that reaches the client as `{error, message}` with its status.
 * `title` is the short public `error` field; `extra` adds fields such as `retry_after`;
 * `headers` are set on the response (for example `Retry-After`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly title: string = ERROR_TITLES[status] ?? 'Error',
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message = 'The requested resource does not exist') => new ApiError(404, message);

function methodNotAllowed(allow: string): ApiError {
  const message = allow ? `This method is not allowed on this address; allowed: ${allow}` : 'This method is not supported on this address';
  return new ApiError(405, message, ERROR_TITLES[405], {}, allow ? { Allow: allow } : {});
}

/** Error raised for invalid input to a service call; routes render it as 400. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(message: string, readonly field?: string) {
    super(message);
  }
}

/**
 * The one error-rendering middleware. Known errors keep their status and message;
 * everything else becomes a 500 whose body never echoes internals, and is logged with the
 * address as the access log shows it (`paths`, the service's routes).
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

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ValidationError) return badRequest(err.message);
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e?.status ?? e?.statusCode;
  // Errors thrown by koa-bodyparser and koa itself (http-errors) carry a status and an expose flag.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (e.type === 'entity.too.large') return new ApiError(413, 'The request body is too large');
    if (e.type === 'entity.parse.failed') return badRequest('The request body is not valid JSON');
    return new ApiError(status, e.expose && e.message ? e.message : ERROR_TITLES[status] ?? 'Request error');
  }
  return new ApiError(500, 'The server could not complete the request');
}
