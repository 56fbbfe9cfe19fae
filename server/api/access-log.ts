import type Router from '@koa/router';
import type Koa from 'koa';

import type { Logger } from '../logger.js';

/**
 * Route parameters an access line may show: record ids, which open nothing without the API key
 * or the admin token. Every other parameter of every route is treated as a capability (an
 * image's name opens the image and its thumbnail) and logged as `[<parameter>]`, so a route
 * added later is masked until someone decides its parameter may be shown.
 */
export const LOGGED_PARAMS: ReadonlySet<string> = new Set(['id', 'job_id']);

/** Segments this long, in an address no route answers, are logged as `[…]`: they may be a mistyped capability. */
const LONG_SEGMENT = 16;

interface RouteShape {
  regexp: RegExp;
  /** The route's pattern; a route declared by a regular expression has none to show. */
  path: string | RegExp;
}

/**
 * What a request's line shows of its address, decided on the service's own routes: the path
 * without the query string (where a signature, key or token may travel), each route parameter
 * that is not a record id (LOGGED_PARAMS) replaced by `[<name>]` — whatever the method, so a
 * 405 on an image's address is masked too. An address no route matches keeps its short
 * segments and loses those of 16 characters or more. Headers (the key, the admin token, the
 * session cookie) are never read.
 */
export class LoggedPaths {
  private readonly routes: RouteShape[];

  constructor(routers: readonly Router[]) {
    this.routes = routers.flatMap((router) =>
      router.stack
        .filter((layer) => layer.methods.length > 0 && layer.paramNames.length > 0)
        .map((layer) => ({ regexp: layer.regexp, path: layer.path })),
    );
  }

  of(path: string): string {
    const route = this.routes.find((r) => r.regexp.test(path));
    if (route) return typeof route.path === 'string' ? maskedPattern(route.path, path, route.regexp) : '[…]';
    return path
      .split('/')
      .map((segment) => (segment.length >= LONG_SEGMENT ? '[…]' : segment))
      .join('/');
  }
}

/** The route's pattern with its loggable parameters filled in from `path` and the others as `[name]`. */
function maskedPattern(pattern: string, path: string, regexp: RegExp): string {
  const captures = regexp.exec(path)?.slice(1) ?? [];
  let index = 0;
  return pattern.replace(/[:*]([A-Za-z_$][\w$]*)/g, (_, name: string) => {
    const value = captures[index++];
    return LOGGED_PARAMS.has(name) && value !== undefined ? value : `[${name}]`;
  });
}

/**
 * One line per request, written once it is answered: method, path (see LoggedPaths), status,
 * duration and the account id when an API key identified one. Mounted first, so it times the
 * whole chain and sees the status the error middleware chose.
 */
export function accessLog(log: Logger, paths: LoggedPaths): Koa.Middleware {
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
      const path = paths.of(ctx.path);
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
