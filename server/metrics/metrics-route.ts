import type Koa from 'koa';

import { adminAuth, type AdminAuthDeps, adminNetworkGuard } from '../api/admin-auth.js';
import { ApiError } from '../api/error-responses.js';
import type { ServiceMetrics } from './service-metrics.js';

export interface MetricsRouteDeps extends AdminAuthDeps {
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
export function metricsEndpoint(metrics: ServiceMetrics, deps: MetricsRouteDeps): Koa.Middleware {
  const auth = { token: deps.metricsToken ?? deps.token, adminAllow: deps.metricsAllow, trustProxy: deps.trustProxy };
  const guard = adminNetworkGuard(auth);
  const check = adminAuth(auth);
  return async (ctx, next) => {
    if (ctx.path !== '/metrics') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ApiError(405, 'This method is not allowed on this address; allowed: GET, HEAD', undefined, {}, { Allow: 'GET, HEAD' });
    }
    await guard(ctx, () =>
      check(ctx, async () => {
        const { contentType, body } = await metrics.exposition();
        ctx.set('Cache-Control', 'no-store');
        ctx.type = contentType;
        ctx.body = body;
      }),
    );
  };
}
