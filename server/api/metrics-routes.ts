import type Router from '@koa/router';

import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { adminAuth, type AdminAuthDeps, adminNetworkGuard } from './admin-auth.js';
import { ApiError } from './error-responses.js';
import { exactRouter } from './routing.js';

export interface MetricsRouteDeps extends AdminAuthDeps {
  metrics: ServiceMetrics;
  /** Addresses allowed to scrape; `SCREENSHOT_METRICS_ALLOW`, the admin ranges by default. */
  metricsAllow: readonly string[];
  /** A token that opens /metrics and nothing else; when unset, the admin token does. */
  metricsToken?: string;
}

/**
 * `GET /metrics`, for Prometheus. It goes through the admin API's own network guard (over the
 * metrics ranges, loopback by default) and bearer check: the metrics token when one is set, so
 * a scraper never holds the admin token; the admin token otherwise. The metrics name no key,
 * account, address or image, but they do tell the load and the failures of the service.
 */
export function metricsRoutes(deps: MetricsRouteDeps): Router {
  const auth = { token: deps.metricsToken ?? deps.token, adminAllow: deps.metricsAllow, trustProxy: deps.trustProxy };
  const guard = adminNetworkGuard(auth);
  const check = adminAuth(auth);
  const router = exactRouter();
  router.all('/metrics', async (ctx) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ApiError(405, 'This method is not allowed on this address; allowed: GET, HEAD', undefined, {}, { Allow: 'GET, HEAD' });
    }
    await guard(ctx, () =>
      check(ctx, async () => {
        const { contentType, body } = await deps.metrics.exposition();
        ctx.set('Cache-Control', 'no-store');
        ctx.type = contentType;
        ctx.body = body;
      }),
    );
  });
  return router;
}
