import type Router from '@koa/router';
import type { Context } from 'koa';

import type { EvidenceKey } from '../crypto/evidence-key.js';
import { checkBundle } from '../crypto/evidence-verify.js';
import { ApiError } from './error-responses.js';
import { exactRouter } from './routing.js';
import { v1Auth, type V1AuthDeps } from './v1-auth.js';

/** The largest bundle POST /v1/evidence/verify reads: it is held in memory while checked. */
export const VERIFY_MAX_BYTES = 128 * 1024 * 1024;
const BUNDLE_TYPES = ['application/wacz', 'application/zip'];

export interface EvidenceRouteDeps extends V1AuthDeps {
  evidenceKey: EvidenceKey;
}

/**
 * GET /v1/evidence/public-key (open: it is what a third party checks bundles against) and
 * POST /v1/evidence/verify (an API key: it reads and hashes up to VERIFY_MAX_BYTES).
 */
export function evidenceRoutes(deps: EvidenceRouteDeps): Router {
  const router = exactRouter('/v1/evidence');

  router.get('/public-key', (ctx) => {
    ctx.body = { algorithm: 'Ed25519', public_key: deps.evidenceKey.publicKey };
  });

  router.post('/verify', v1Auth(deps), async (ctx) => {
    if (!ctx.is(BUNDLE_TYPES)) throw new ApiError(415, 'Content-Type must be application/wacz or application/zip');
    ctx.body = await checkBundle(await readBundle(ctx), deps.evidenceKey.publicKey);
  });

  return router;
}

/** The request's body, refused with 413 once past VERIFY_MAX_BYTES (by its Content-Length, or as it streams). */
async function readBundle(ctx: Context): Promise<Buffer> {
  const tooLarge = () => new ApiError(413, `The bundle is larger than ${VERIFY_MAX_BYTES / 1024 / 1024} MB`);
  if (Number(ctx.get('Content-Length') || 0) > VERIFY_MAX_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > VERIFY_MAX_BYTES) {
      // The rest is not read: the connection ends with the answer.
      ctx.set('Connection', 'close');
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
