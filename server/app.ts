import type Router from '@koa/router';
import Koa from 'koa';

import { accessLog, LoggedPaths } from './api/access-log.js';
import { type AdminBatchDeps, adminBatchRoutes } from './api/admin-batch-routes.js';
import { adminLoginRoutes } from './api/admin-login-routes.js';
import { type AdminMonitorDeps, adminMonitorRoutes } from './api/admin-monitor-routes.js';
import { type AdminDeps, adminRoutes } from './api/admin-routes.js';
import { adminSessionRoutes } from './api/admin-session-routes.js';
import { batchRoutes } from './api/batch-routes.js';
import { errorMiddleware } from './api/error-middleware.js';
import { evidenceRoutes } from './api/evidence-routes.js';
import { fileRoutes } from './api/file-routes.js';
import { healthRoutes } from './api/health-routes.js';
import { loginRoutes } from './api/login-routes.js';
import { mcpRoutes } from './api/mcp-routes.js';
import { metricsRoutes } from './api/metrics-routes.js';
import { monitorRoutes } from './api/monitor-routes.js';
import { v1OpenApiRoutes } from './api/openapi.js';
import { adminOpenApiRoutes, type OpenApiDeps } from './api/openapi.js';
import { findRendererDir, panelRoutes } from './api/panel-routes.js';
import { renderRoutes } from './api/render-routes.js';
import { v1Routes } from './api/v1-routes.js';
import type { AdminSessions } from './auth/admin-sessions.js';
import type { Services } from './services.js';

function mount(app: Koa, router: Router) {
  app.use(router.routes());
  app.use(
    // Not thrown: the router then sets `Allow`, and the error middleware renders the status.
    router.allowedMethods(),
  );
}

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

/** The admin API's routers: the session exchange, then the routes behind the admin token. */
export function adminApiRouters(deps: AdminDeps & AdminMonitorDeps & AdminBatchDeps & OpenApiDeps & { sessions: AdminSessions }): Router[] {
  return [adminSessionRoutes(deps), adminRoutes(deps), adminLoginRoutes(deps), adminMonitorRoutes(deps), adminBatchRoutes(deps), adminOpenApiRoutes(deps)];
}

/**
 * Every router of the service, in the order they are mounted: the public ones (health, the v1
 * API), then those behind the admin network rule (/metrics, the panel's files, the admin API).
 */
export function appRouters(services: Services): { v1: Router[]; admin: Router[] } {
  const deps = { ...services, trustProxy: services.config.trustProxy };
  const admin = { ...deps, ...adminDeps(services) };
  return {
    v1: [healthRoutes(services), fileRoutes(deps), v1OpenApiRoutes(deps), v1Routes(deps), batchRoutes(deps), evidenceRoutes(deps), monitorRoutes(deps), loginRoutes(deps), renderRoutes(deps), mcpRoutes(deps)],
    admin: [
      metricsRoutes({ ...admin, metricsAllow: services.config.metricsAllow, metricsToken: services.config.metricsToken }),
      panelRoutes({ ...admin, rendererDir: services.rendererDir ?? findRendererDir() }),
      ...adminApiRouters(admin),
    ],
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
  for (const router of [...v1, ...admin]) mount(app, router);
  return app;
}
