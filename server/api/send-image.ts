import type { Context } from 'koa';

import type { ByteRange, StoredObject } from '../store/file-store.js';

/**
 * Sends a stored image with the validators `headersFor` gives it (an ETag among them): 304 when
 * the client's If-None-Match names that ETag (one of a list, weak or not), else the bytes,
 * streamed: all of them, or with a satisfiable `Range: bytes=…` (one range) 206 and those bytes
 * only, 416 when no byte of the range exists. A Range with an If-Range naming another ETag, or
 * of several ranges, gets the whole image. Throws `missing()` when the image is gone.
 */
export async function sendImage(
  ctx: Context,
  stored: StoredObject | null,
  type: string,
  missing: () => Error,
  headersFor: (stored: StoredObject) => { ETag: string; 'Cache-Control': string } & Record<string, string>,
): Promise<void> {
  if (!stored) throw missing();
  const headers = headersFor(stored);
  ctx.set(headers);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Accept-Ranges', 'bytes');
  const match = ctx.get('If-None-Match');
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === headers.ETag)) {
    ctx.status = 304;
    return;
  }
  const ifRange = ctx.get('If-Range');
  const range = ctx.get('Range') && (!ifRange || ifRange === headers.ETag) ? parseRange(ctx.get('Range'), stored.size) : undefined;
  if (range === 'unsatisfiable') {
    ctx.status = 416;
    ctx.set('Content-Range', `bytes */${stored.size}`);
    ctx.body = '';
    return;
  }
  const body = await stored.open(range);
  ctx.type = type;
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${stored.size}`);
  }
  ctx.body = body;
  ctx.length = range ? range.end - range.start + 1 : stored.size;
}

/**
 * One byte range of a `Range` header (RFC 9110 §14.1.2) over an object of `size` bytes:
 * `bytes=a-b`, `bytes=a-`, `bytes=-n` (the last n). Undefined for a header to ignore (another
 * unit, several ranges, a malformed one): the whole object is sent. `unsatisfiable` when the
 * range starts past the end (or the suffix is empty).
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
