import { AccountShareFullError, NotFoundError, QueueFullError, RateLimitedError, ShuttingDownError, ValidationError } from '../domain-errors.js';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../jobs/idempotent-requests.js';
import { SitemapUnreadableError } from '../jobs/sitemap-reader.js';
import { DiskFullError } from '../store/disk-full.js';
import { ObjectStorageError } from '../store/file-store.js';
import { StoreUnavailableError } from '../store/stores.js';

/** Public titles for each status, as the v1 specification and DESIGN.md name them. */
export const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Access denied',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Rate limit exceeded',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
  507: 'Insufficient storage',
};

/**
 * An error that reaches the client as `{error, message}` with its status.
 * `title` is the short public `error` field; `extra` adds fields such as `retry_after`;
 * `headers` are set on the response (for example `Retry-After`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly title: string = ERROR_TITLES[status] ?? 'Error',
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message = 'The requested resource does not exist') => new ApiError(404, message);

const retryAfter = (seconds: number) => ({ 'Retry-After': String(seconds) });

/** One row of the table: an error class of the services, and the answer it gets. */
interface ErrorResponse<E extends Error> {
  kind: abstract new (...args: never[]) => E;
  answer: (err: E) => ApiError;
}

const row = <E extends Error>(kind: ErrorResponse<E>['kind'], answer: (err: E) => ApiError): ErrorResponse<E> => ({ kind, answer });

/**
 * How each error the services throw is answered: status, title, message and headers. The
 * services say what went wrong; this table alone says what HTTP makes of it.
 */
const ERROR_RESPONSES: ReadonlyArray<ErrorResponse<Error>> = [
  row(ValidationError, (e) => new ApiError(400, e.message)),
  row(SitemapUnreadableError, (e) => new ApiError(400, e.message)),
  row(NotFoundError, (e) => new ApiError(404, e.message)),
  row(RateLimitedError, (e) => new ApiError(429, e.message, ERROR_TITLES[429], { retry_after: e.retryAfterSeconds }, retryAfter(e.retryAfterSeconds))),
  row(ShuttingDownError, (e) => new ApiError(503, e.message, ERROR_TITLES[503], {}, retryAfter(e.retryAfterSeconds))),
  row(QueueFullError, (e) => new ApiError(503, e.message, ERROR_TITLES[503], {}, retryAfter(e.retryAfterSeconds))),
  row(AccountShareFullError, (e) => new ApiError(503, e.message, ERROR_TITLES[503], {}, retryAfter(e.retryAfterSeconds))),
  // As draft-ietf-httpapi-idempotency-key-header has them: 409 while the first request is in flight, 422 for another body.
  row(IdempotencyKeyInUseError, (e) => new ApiError(409, e.message, ERROR_TITLES[409], {}, retryAfter(e.retryAfterSeconds))),
  row(IdempotencyKeyReusedError, (e) => new ApiError(422, e.message)),
  // A database that is down: the client may retry; its driver's words stay in the log.
  row(StoreUnavailableError, () => new ApiError(503, 'The database did not answer; try again shortly', ERROR_TITLES[503], {}, retryAfter(5))),
  // Nothing of the write was kept, so the client may simply try again once space has been freed.
  row(DiskFullError, () => new ApiError(507, "The server's disk is full, so nothing was stored; try again once space has been freed")),
  // Object storage that is down or refusing: the client may retry; the bucket's words stay in the log.
  row(ObjectStorageError, () => new ApiError(503, 'The file storage did not answer; try again shortly', ERROR_TITLES[503], {}, retryAfter(5))),
] as ReadonlyArray<ErrorResponse<Error>>;

/** The answer to an error the service knows (its own, or one the table lists); undefined for any other. */
export function knownErrorResponse(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  return ERROR_RESPONSES.find((r) => err instanceof r.kind)?.answer(err as Error);
}

/**
 * The answer to any error: a known one's, koa's and koa-bodyparser's client errors with their
 * status, and for everything else a 500 whose message never echoes internals.
 */
export function toApiError(err: unknown): ApiError {
  const known = knownErrorResponse(err);
  if (known) return known;
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e?.status ?? e?.statusCode;
  // Errors thrown by koa-bodyparser and koa itself (http-errors) carry a status and an expose flag.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (e.type === 'entity.too.large') return new ApiError(413, 'The request body is too large');
    if (e.type === 'entity.parse.failed') return badRequest('The request body is not valid JSON');
    return new ApiError(status, e.expose && e.message ? e.message : ERROR_TITLES[status] ?? 'Request error');
  }
  return new ApiError(500, 'The server could not complete the request');
}
