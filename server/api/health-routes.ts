import type Router from '@koa/router';

import { type CaptureEngine, oneBrowser } from '../capture/engine.js';
import { readiness } from '../metrics/readiness.js';
import type { FileStore } from '../store/file-store.js';
import type { Stores } from '../store/stores.js';
import { exactRouter } from './routing.js';

export interface HealthDeps {
  files: Pick<FileStore, 'health'>;
  stores: Pick<Stores, 'health'>;
  engine: CaptureEngine;
  /** Whether the service has finished starting. */
  isStarted(): boolean;
}

/**
 * `/healthz` (the process answers) and `/readyz` (the files location (a directory, or the bucket), the stores, the start and
 * the browsers: 503 until all are ready), for load balancers and orchestrators, without a key
 * and to every method.
 */
export function healthRoutes(deps: HealthDeps): Router {
  const router = exactRouter();
  router.all('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.all('/readyz', async (ctx) => {
    const report = await readiness({
      files: () => deps.files.health(),
      stores: () => deps.stores.health(),
      started: () => deps.isStarted(),
      browsers: () => deps.engine.browsers?.() ?? oneBrowser(deps.engine.isReady()),
    });
    ctx.status = report.status === 'ready' ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = report;
  });
  return router;
}
