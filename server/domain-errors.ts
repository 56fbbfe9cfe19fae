/**
 * The errors services throw for what a caller asked that cannot be done, each with its data.
 * They know no HTTP: the API's one table (`api/error-responses.ts`) gives each its status,
 * title and headers. Errors of one store or engine live beside it (`StoreUnavailableError`,
 * `DiskFullError`, `CaptureError`).
 */

/** Invalid input to a service call, naming the field when there is one. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(message: string, readonly field?: string) {
    super(message);
  }
}

/** No record of this kind with this id (or none the caller may see, so ids reveal nothing). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  /**
   * @param what the kind of record, as a sentence names it: `account`, `API key`, `screenshot job`
   * @param id the id asked for
   */
  constructor(readonly what: string, readonly id: string) {
    super(`No ${what} ${id}`);
  }
}

/** A limit on how often or how much a caller may ask was reached; `message` says which and when it resets. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

/** The capture queue holds `limit` jobs already; room is likely in `retryAfterSeconds`. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  constructor(readonly limit: number, readonly retryAfterSeconds: number) {
    super(`The capture queue is full (${limit} jobs); try again in about ${retryAfterSeconds} seconds`);
  }
}

/** An account has `have` jobs waiting or running, its `share` of the queue of `limit` jobs. */
export class AccountShareFullError extends Error {
  override readonly name = 'AccountShareFullError';
  constructor(readonly have: number, readonly share: number, readonly limit: number, readonly retryAfterSeconds: number) {
    super(
      `This account has ${have} jobs waiting or running, its share of the capture queue (${share} of ${limit} jobs); ` +
        `try again in about ${retryAfterSeconds} seconds`,
    );
  }
}

/** The service is stopping and takes no new jobs; another instance (or this one, restarted) will. */
export class ShuttingDownError extends Error {
  override readonly name = 'ShuttingDownError';
  readonly retryAfterSeconds = 5;
  constructor() {
    super('The service is shutting down; try again shortly');
  }
}
