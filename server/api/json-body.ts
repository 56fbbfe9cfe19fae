import bodyParser from 'koa-bodyparser';

import { MAX_BODY_KB } from '../contract/v1.js';
import { ApiError, badRequest } from './error-responses.js';

/** A JSON request body of at most MAX_BODY_KB: 413 past it, 400 when it is not JSON. */
export const jsonBody = bodyParser({
  enableTypes: ['json'],
  jsonLimit: `${MAX_BODY_KB}kb`,
  strict: true,
  onerror: (err) => {
    const e = err as { status?: number; type?: string };
    if (e.type === 'entity.too.large' || e.status === 413) throw new ApiError(413, `The request body is larger than ${MAX_BODY_KB} KB`);
    throw badRequest('The request body is not valid JSON');
  },
});
