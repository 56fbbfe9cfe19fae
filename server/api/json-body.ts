import type { Context, Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';

import { MAX_BODY_KB } from '../contract/v1.js';
import { ApiError, badRequest } from './error-responses.js';

/**
 * The one reader of JSON request bodies, for v1 and the admin API alike: a body past `limitKb`
 * is 413, anything else it cannot read is 400. The two are told apart by the status the parser
 * gives its error (raw-body's 413), never by the error's words.
 */
export function jsonBodyReader(limitKb: number): Middleware {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitKb}kb`,
    strict: true,
    onerror: (err) => {
      if ((err as { status?: number }).status === 413) throw new ApiError(413, `The request body is larger than ${limitKb} KB`);
      throw badRequest('The request body is not valid JSON');
    },
  });
}

/** A v1 request body: at most MAX_BODY_KB (an HTML page to capture may be large). */
export const jsonBody = jsonBodyReader(MAX_BODY_KB);

/** The parsed body a reader left on the request (`{}` when there was none), for the route to validate. */
export const requestBody = (ctx: Context): unknown => (ctx.request as unknown as { body: unknown }).body;
