import fs from 'node:fs';

import type { Context } from 'koa';

/**
 * Sends a stored image with the validators `headersFor` gives it (an ETag among them): 304 when
 * the client's If-None-Match names that ETag (one of a list, weak or not), else the bytes,
 * streamed. Throws `missing()` when the file is gone.
 */
export async function sendImage(
  ctx: Context,
  file: string,
  type: string,
  missing: () => Error,
  headersFor: (stat: fs.Stats) => { ETag: string; 'Cache-Control': string } & Record<string, string>,
): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch {
    throw missing();
  }
  const headers = headersFor(stat);
  ctx.set(headers);
  ctx.set('X-Content-Type-Options', 'nosniff');
  const match = ctx.get('If-None-Match');
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === headers.ETag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.length = stat.size;
  ctx.body = fs.createReadStream(file);
}
