import type Router from '@koa/router';
import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';

import { clientAddress } from '../auth/client-address.js';
import { IMAGE_CONTENT_TYPES, type ImageFormat } from '../capture/engine.js';
import { FILE_NAME_PATTERN } from '../contract/v1.js';
import { RateLimitedError } from '../domain-errors.js';
import type { JobService } from '../jobs/job-service.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { SettingsService } from '../settings.js';
import { evidenceName, type FileStore } from '../store/file-store.js';
import type { Clock } from '../time.js';
import { notFound } from './error-responses.js';
import { exactRouter } from './routing.js';
import { sendImage } from './send-image.js';

const FILE_NAME = new RegExp(FILE_NAME_PATTERN);
const EXT_FORMAT: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', webp: 'webp', pdf: 'pdf' };

export interface FileRouteDeps {
  jobs: JobService;
  files: FileStore;
  settings: SettingsService;
  clock: Clock;
  /** Image requests per second per client address (see rateKey). */
  fileRateLimiter: RateLimiter;
  trustProxy: readonly string[];
}

/**
 * The rate limit's key for a client: its address, or for IPv6 its /64, which one host can
 * hold whole and rotate through.
 */
export function rateKey(address: string): string {
  if (!ipaddr.IPv6.isValid(address) || ipaddr.IPv4.isValid(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

/**
 * GET /v1/files/:name — the image behind a screenshot_url. It needs no API key: the
 * 144-bit random name is the capability, so the address can be handed to an <img> tag.
 * Cached by clients until the retention period ends; 404 after expiry. Rate limited per client
 * address, so no client can keep the server busy with guesses. With object storage and
 * SCREENSHOT_S3_PRESIGNED, answered (after the same checks) with a 302 to a short-lived
 * presigned address of the object instead of the bytes.
 */
export function fileRoutes(deps: FileRouteDeps): Router {
  const router = exactRouter();
  router.get('/v1/files/:name', async (ctx) => {
    const { name, maxAge } = await capability(ctx, deps, 'file');
    // Object storage with presigned addresses: the checks above passed, the bytes come from the bucket.
    const presigned = await deps.files.presignedImageUrl(name);
    if (presigned) {
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(presigned);
      return;
    }
    await sendImage(ctx, await deps.files.image(name), IMAGE_CONTENT_TYPES[EXT_FORMAT[name.split('.').pop() ?? 'png']], () => notFound('No such file'), (stored) => ({
      ETag: `"${name.slice(0, 24)}-${stored.size.toString(36)}"`,
      'Cache-Control': `private, max-age=${maxAge}, immutable`,
      'Last-Modified': stored.lastModified.toUTCString(),
    }));
  });

  // The evidence bundle of an `evidence` job (a signed WACZ), under its image's capability name.
  router.get('/v1/files/:name/evidence.wacz', async (ctx) => {
    const { name, maxAge } = await capability(ctx, deps, 'evidence bundle');
    await sendImage(ctx, await deps.files.image(evidenceName(name)), 'application/wacz', () => notFound('No such evidence bundle'), (stored) => ({
      ETag: `"${name.slice(0, 24)}-e${stored.size.toString(36)}"`,
      'Cache-Control': `private, max-age=${maxAge}, immutable`,
      'Last-Modified': stored.lastModified.toUTCString(),
      'Content-Disposition': `attachment; filename="${evidenceName(name)}"`,
    }));
  });

  // The thumbnail of an image, under the same capability name (the job list's small pictures).
  router.get('/v1/files/:name/thumbnail', async (ctx) => {
    const { name, maxAge } = await capability(ctx, deps, 'thumbnail');
    const thumbnail = await deps.files.readThumbnail(name);
    if (!thumbnail) throw notFound('No such thumbnail');
    ctx.set('Cache-Control', `private, max-age=${maxAge}, immutable`);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'image/webp';
    ctx.body = thumbnail;
  });
  return router;
}

/** What a capability check needs: the file routes' dependencies but the file store. */
export type CapabilityDeps = Pick<FileRouteDeps, 'jobs' | 'settings' | 'clock' | 'fileRateLimiter' | 'trustProxy'>;

/**
 * What every route under a screenshot's capability name checks before serving (the image, its
 * thumbnail, a monitor's diff picture): the client's rate, a well-formed name (a PDF has no
 * thumbnail), a job that holds the image and has not expired. Returns the name and the seconds a
 * client may cache the answer: until the retention period ends.
 */
export async function capability(ctx: Context, deps: CapabilityDeps, what: 'file' | 'thumbnail' | 'diff picture' | 'evidence bundle'): Promise<{ name: string; maxAge: number }> {
  const client = rateKey(clientAddress(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, deps.trustProxy));
  const wait = deps.fileRateLimiter.take(client);
  if (wait > 0) throw new RateLimitedError(`Too many image requests from this address: the limit is ${deps.fileRateLimiter.limit} per second`, wait);
  const name = String(ctx.params.name);
  if (!FILE_NAME.test(name) || (what === 'thumbnail' && name.endsWith('.pdf'))) throw notFound(`No such ${what}`);
  const job = await deps.jobs.findByImage(name);
  if (!job || job.expired) throw notFound(`No such ${what}; screenshots are removed after the retention period`);
  const expiresAt = (job.completed_at ?? job.created_at) + deps.settings.get().retention_days * 86_400_000;
  return { name, maxAge: Math.max(0, Math.floor((expiresAt - deps.clock.now()) / 1000)) };
}
