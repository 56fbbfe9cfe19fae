import type Router from '@koa/router';
import Koa from 'koa';

import { accessLog } from './api/access-log.js';
import { adminNetworkGuard } from './api/admin-auth.js';
import { adminRoutes } from './api/admin-routes.js';
import { adminStatic, findRendererDir } from './api/admin-static.js';
import { fileRoutes } from './api/file-routes.js';
import { v1OpenApiRoutes } from './api/openapi.js';
import { v1Routes } from './api/v1-routes.js';
import { errorMiddleware } from './errors.js';
import type { Services } from './services.js';

function mount(app: Koa, router: Router) {
  app.use(router.routes());
  app.use(
    // Not thrown: the router then sets `Allow`, and the error middleware renders the status.
    router.allowedMethods(),
  );
}

/** The Koa application over the services (it does not listen). */
export function createApp(services: Services): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(accessLog(services.log));
  app.use(errorMiddleware((msg, err) => services.log.error({ component: 'http', err }, msg)));

  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz') {
      const ready = services.isReady();
      ctx.status = ready ? 200 : 503;
      ctx.body = { status: ready ? 'ready' : 'starting', engine: services.engine.isReady(), stores: true };
      return;
    }
    await next();
  });

  const deps = { ...services, trustProxy: services.config.trustProxy };
  mount(app, fileRoutes(deps));
  mount(app, v1OpenApiRoutes(deps));
  mount(app, v1Routes(deps));

  const adminDeps = { token: services.adminToken, adminAllow: services.config.adminAllow, trustProxy: services.config.trustProxy };
  app.use(adminStatic(services.rendererDir ?? findRendererDir(), adminNetworkGuard(adminDeps)));
  for (const router of adminRoutes({ ...deps, ...adminDeps })) {
    mount(app, router);
  }
  return app;
}
