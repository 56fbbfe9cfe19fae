import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type Router from '@koa/router';
import type { Context } from 'koa';

import { type AdminAuthDeps,adminNetworkGuard } from './admin-auth.js';
import { badRequest, notFound } from './error-responses.js';
import { exactRouter } from './routing.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * Where the built control panel is: dist/renderer, seen from server/api (running from source)
 * or from dist/server/api (the build). Only a built panel counts (it has assets/), never the
 * renderer's sources.
 */
export function findRendererDir(): string | undefined {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../dist/renderer'), path.resolve(here, '../../renderer')];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')) && fs.existsSync(path.join(dir, 'assets')));
}

export interface PanelDeps extends AdminAuthDeps {
  /** The built control panel (findRendererDir); none: every panel address answers 503. */
  rendererDir?: string;
}

/**
 * Serves the control panel at /admin/, to the addresses the admin network rule allows. The
 * page itself holds no secret (the token arrives in the address fragment), so it needs no
 * auth; the strict CSP keeps injected script out. Only the panel's own files are served, at
 * their exact lower-case addresses, to GET and HEAD; the panel routes by fragment, so any other
 * address or method is a 404, as for an address no route has. `/admin/api/` is the admin API's.
 */
export function panelRoutes(deps: PanelDeps): Router {
  const networkGuard = adminNetworkGuard(deps);
  const router = exactRouter();
  router.all(/^\/admin$/, (ctx) => networkGuard(ctx, async () => ctx.redirect('/admin/')));
  router.all(/^\/admin\/(?!api\/)/, (ctx) => {
    if (!['GET', 'HEAD'].includes(ctx.method)) throw noRoute(ctx);
    return networkGuard(ctx, () => servePanelFile(ctx, deps.rendererDir));
  });
  return router;
}

/** What the error middleware answers to an address no route has. */
const noRoute = (ctx: Context) => notFound(`No route for ${ctx.method} ${ctx.path}`);

async function servePanelFile(ctx: Context, rendererDir: string | undefined): Promise<void> {
  if (!rendererDir) {
    ctx.status = 503;
    ctx.type = 'text/plain';
    ctx.body = 'The control panel is not built. Run: npm run build';
    return;
  }
  let relative: string;
  try {
    relative = decodeURIComponent(ctx.path.slice('/admin/'.length)) || 'index.html';
  } catch {
    throw badRequest('The address has a malformed percent-escape');
  }
  const file = path.resolve(rendererDir, relative);
  const inside = file.startsWith(rendererDir + path.sep);
  if (!inside || !fs.existsSync(file) || !fs.statSync(file).isFile()) throw noRoute(ctx);
  ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set(
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data: blob: http: https:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  );
  ctx.set('Cache-Control', file.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
  ctx.body = fs.createReadStream(file);
}
