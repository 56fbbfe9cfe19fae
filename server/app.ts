import type Router from '@koa/router';
import Koa from 'koa';

import { accessLog, LoggedPaths } from './api/access-log.js';
import { adminNetworkGuard } from './api/admin-auth.js';
import { adminRoutes } from './api/admin-routes.js';
import { adminStatic, findRendererDir } from './api/admin-static.js';
import { errorMiddleware } from './api/error-middleware.js';
import { fileRoutes } from './api/file-routes.js';
import { mcpRoutes } from './api/mcp-routes.js';
import { v1OpenApiRoutes } from './api/openapi.js';
import { renderRoutes } from './api/render-routes.js';
import { v1Routes } from './api/v1-routes.js';
import { oneBrowser } from './capture/engine.js';
import { metricsEndpoint } from './metrics/metrics-route.js';
import { readiness } from './metrics/readiness.js';
import type { Services } from './services.js';

function mount(app: Koa, router: Router) {
  app.use(router.routes());
  app.use(
    // Not thrown: the router then sets `Allow`, and the error middleware renders the status.
    router.allowedMethods(),
  );
}

/** The routes the handlers outside the routers answer, as the metrics label them. */
const FIXED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Counts each answered request by its route: the router's pattern (`/v1/screenshot/:id`), never
 * the address, which holds job ids and image names. Mounted outside the error middleware, so
 * it sees the status the client gets.
 */
function countRequests(services: Services): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    let status: number | undefined;
    try {
      await next();
    } catch (err) {
      status = 500;
      throw err;
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route =
        typeof matched === 'string' ? matched
        : FIXED_ROUTES.has(ctx.path) ? ctx.path
        : ctx.path === '/admin' || ctx.path.startsWith('/admin/') ? '/admin/*'
        : 'unmatched';
      services.metrics.request(ctx.method, route, status ?? ctx.status, (performance.now() - started) / 1000);
    }
  };
}

/** What the admin routes, the panel's files and /metrics check a request against. */
const adminDeps = (services: Services) => ({
  token: services.adminToken,
  adminAllow: services.config.adminAllow,
  trustProxy: services.config.trustProxy,
  sessions: services.adminSessions,
});

/** Every router of the service: the v1 API's, then the admin API's (mounted after the panel's files). */
export function appRouters(services: Services): { v1: Router[]; admin: Router[] } {
  const deps = { ...services, trustProxy: services.config.trustProxy };
  return {
    v1: [fileRoutes(deps), v1OpenApiRoutes(deps), v1Routes(deps), renderRoutes(deps), mcpRoutes(deps)],
    admin: adminRoutes({ ...deps, ...adminDeps(services) }),
  };
}

/** The Koa application over the services (it does not listen). */
export function createApp(services: Services): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const { v1, admin } = appRouters(services);
  // What the logs show of an address is decided on these routes, every one of them.
  const paths = new LoggedPaths([...v1, ...admin]);
  app.use(accessLog(services.log, paths));
  app.use(countRequests(services));
  app.use(errorMiddleware((msg, err) => services.log.error({ component: 'http', err }, msg), paths));

  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz') {
      const report = await readiness({
        filesDir: services.files.root,
        stores: () => services.stores.health(),
        started: () => services.isStarted(),
        browsers: () => services.engine.browsers?.() ?? oneBrowser(services.engine.isReady()),
      });
      ctx.status = report.status === 'ready' ? 200 : 503;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = report;
      return;
    }
    await next();
  });

  for (const router of v1) mount(app, router);

  app.use(
    metricsEndpoint(services.metrics, {
      ...adminDeps(services),
      metricsAllow: services.config.metricsAllow,
      metricsToken: services.config.metricsToken,
    }),
  );
  app.use(adminStatic(services.rendererDir ?? findRendererDir(), adminNetworkGuard(adminDeps(services))));
  for (const router of admin) mount(app, router);
  return app;
}
