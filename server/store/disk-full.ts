/** Codes with which the file system says there is no room left (EDQUOT: the user's quota). */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT']);

export function isDiskFull(err: unknown): boolean {
  return NO_ROOM.has((err as NodeJS.ErrnoException)?.code ?? '');
}

/**
 * A write refused because the data directory's disk is full. Nothing of the write was kept,
 * so the client may simply try again once space has been freed. It keeps the code ENOSPC so a
 * job failing with it says "the disk is full".
 */
export class DiskFullError extends Error {
  override readonly name = 'DiskFullError';
  readonly code = 'ENOSPC';

  constructor(cause: unknown) {
    super("The server's disk is full, so nothing was stored; try again once space has been freed");
    this.cause = cause;
  }
}
