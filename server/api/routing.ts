import Router, { type LayerOptions, type RouterMiddleware, type RouterOptions } from '@koa/router';

/**
 * Every router of the service matches a path exactly as it is spelled: case-sensitive and
 * strict about trailing slashes. A spelling a lenient matcher would accept (`/ADMIN/api/keys`,
 * `/admin/api/keys/`) reaches no route at all, so it can never reach a route without the
 * checks that route carries. @koa/router compiles its own `use` middleware with different
 * options from its routes, which once let `/ADMIN/api/*` past the admin token.
 */
export function exactRouter(prefix?: string): Router {
  return new Router({ prefix, sensitive: true, strict: true });
}

/**
 * A router whose every route runs `gate` first, as part of that route's own middleware, so a
 * check (the admin token, the admin network rule) is decided on exactly the route that runs,
 * never on a second reading of the path by a prefix test. Routes added later by other modules
 * get the gate too.
 */
export class GatedRouter extends Router {
  private readonly gate: RouterMiddleware[];

  constructor(prefix: string, gate: RouterMiddleware[], options: RouterOptions = {}) {
    super({ ...options, prefix, sensitive: true, strict: true });
    this.gate = gate;
  }

  override register(
    path: string | RegExp | string[],
    methods: string[],
    middleware: RouterMiddleware | RouterMiddleware[],
    additionalOptions?: LayerOptions,
  ) {
    const stack = Array.isArray(middleware) ? middleware : [middleware];
    // `use` middleware (no methods) is not a route; routes are what the gate guards.
    return super.register(path, methods, methods.length ? [...this.gate, ...stack] : stack, additionalOptions);
  }
}
