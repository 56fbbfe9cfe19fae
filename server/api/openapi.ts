import type Router from '@koa/router';

import type { SettingsService } from '../settings.js';
import type { AdminAuthDeps } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';
import { baseUrlOf } from './base-url.js';
import { adminOpenApiDocument } from './openapi/admin-document.js';
import { v1OpenApiDocument } from './openapi/v1-document.js';
import { exactRouter } from './routing.js';

export interface OpenApiDeps {
  settings: SettingsService;
}

/**
 * GET /v1/openapi.json — the v1 contract, without a key: client generators and API tools
 * fetch it before they have one, and it describes nothing a key protects. Its server
 * address is the one this request came through, so a generated client works as is.
 */
export function v1OpenApiRoutes(deps: OpenApiDeps): Router {
  const router = exactRouter();
  router.get('/v1/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = v1OpenApiDocument(baseUrlOf(ctx, deps.settings));
  });
  return router;
}

/** GET /admin/api/openapi.json, behind the admin network rule and the admin token as the admin API is. */
export function adminOpenApiRoutes(deps: OpenApiDeps & AdminAuthDeps): Router {
  const router = adminApiRouter(deps);
  router.get('/openapi.json', (ctx) => {
    ctx.body = adminOpenApiDocument(baseUrlOf(ctx, deps.settings));
  });
  return router;
}
