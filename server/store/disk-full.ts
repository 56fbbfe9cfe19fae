import { ApiError } from '../errors.js';

/** Codes with which the file system says there is no room left (EDQUOT: the user's quota). */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT']);

export function isDiskFull(err: unknown): boolean {
  return NO_ROOM.has((err as NodeJS.ErrnoException)?.code ?? '');
}

/**
 * A write refused because the data directory's disk is full. Nothing of the write was kept,
 * so the client may simply try again once space has been freed. It answers 507 wherever it
 * reaches the error middleware, and keeps the code ENOSPC so a job failing with it says
 * "the disk is full".
 */
export class DiskFullError extends ApiError {
  readonly code = 'ENOSPC';

  constructor(cause: unknown) {
    super(507, "The server's disk is full, so nothing was stored; try again once space has been freed");
    this.cause = cause;
  }
}
