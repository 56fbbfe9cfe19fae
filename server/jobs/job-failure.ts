import { BrowserCrashedError, CaptureError, PageCrashedError } from '../capture/engine.js';
import { EgressDeniedError, HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';
import { ObjectStorageError } from '../store/file-store.js';
import { StoreUnavailableError } from '../store/stores.js';

/** What a failed job's `failure_class` label says; a short, fixed list so the series stay few. */
export type FailureClass = 'page' | 'timeout' | 'egress_denied' | 'dns' | 'page_crashed' | 'browser_crashed' | 'storage' | 'internal';

export const FAILURE_CLASSES: readonly FailureClass[] = [
  'page',
  'timeout',
  'egress_denied',
  'dns',
  'page_crashed',
  'browser_crashed',
  'storage',
  'internal',
];

/** How a job failed, as the job shows it, as the log needs it and as the metrics count it. */
export interface JobFailure {
  /** The job's `error` text: the capture's own message, or a plain one that leaks no internals. */
  message: string;
  /**
   * The service's own fault (the disk, a bug) rather than the page's or the browser's: worth
   * an error line with the stack, where a page that fails is only the job's business.
   */
  internal: boolean;
  /**
   * The metric's `failure_class`: the page's own failure (`page`: unreachable, refused, over its
   * memory), the job's last-resort deadline (`timeout`), the egress policy, name resolution, a
   * renderer or browser that died on both tries, the data directory or the bucket (`storage`), or
   * a fault of the service.
   */
  label: FailureClass;
}

/** A job that was under way each time the service stopped, too often to be run again (MAX_RUNS_AFTER_A_STOP). */
export class StoppedServiceError extends Error {
  override readonly name = 'StoppedServiceError';
  constructor(readonly starts: number) {
    super(`The service stopped ${starts} times while capturing this page; it is not tried again`);
  }
}

/**
 * Failures a user's request can cause, whose messages say what happened in words safe to show:
 * the egress policy, a host name that does not resolve, the page (CaptureError).
 */
const SAYS_WHAT_HAPPENED: ReadonlyArray<[new (...args: never[]) => Error, FailureClass]> = [
  [EgressDeniedError, 'egress_denied'],
  [HostNotFoundError, 'dns'],
  [HostLookupTimeoutError, 'dns'],
  [CaptureError, 'page'],
  // Most likely the page stopped it (a message too large for Node, say): the page's own failure.
  [StoppedServiceError, 'page'],
];

/** System error codes of a data directory that cannot take the write, and what the job says of each. */
const STORAGE_CODES: Record<string, string> = {
  ENOSPC: 'Could not store the screenshot: the disk is full',
  EACCES: 'Could not store the screenshot: the data directory is not writable',
  EROFS: 'Could not store the screenshot: the data directory is not writable',
  EIO: 'Could not store the screenshot: the data directory is not writable',
};

/** Tells a failure by its class (or its system error code), never by its message. */
export function classifyFailure(err: unknown, signal: AbortSignal): JobFailure {
  if (signal.aborted && signal.reason instanceof CaptureError) return { message: signal.reason.message, internal: false, label: 'timeout' };
  const shown = SAYS_WHAT_HAPPENED.find(([kind]) => err instanceof kind);
  if (shown) return { message: (err as Error).message, internal: false, label: shown[1] };
  // Both are retried once (JobRunner), so a job failing with one has crashed twice.
  if (err instanceof PageCrashedError) return { message: `The page crashed while capturing ${err.url} (tried twice)`, internal: false, label: 'page_crashed' };
  if (err instanceof BrowserCrashedError) return { message: 'The browser crashed while capturing the page (tried twice)', internal: false, label: 'browser_crashed' };
  if (err instanceof StoreUnavailableError) return { message: 'Could not store the screenshot: the database did not answer', internal: true, label: 'internal' };
  // As a full disk: nothing of the write was kept, and the next job tries the bucket again.
  if (err instanceof ObjectStorageError) return { message: `Could not store the screenshot: ${err.message}`, internal: true, label: 'storage' };
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (Object.hasOwn(STORAGE_CODES, code)) return { message: STORAGE_CODES[code], internal: true, label: 'storage' };
  return { message: 'The capture failed unexpectedly', internal: true, label: 'internal' };
}

/** A failure's message and whether it is the service's own fault (classifyFailure without the label). */
export function describeFailure(err: unknown, signal: AbortSignal): Pick<JobFailure, 'message' | 'internal'> {
  const { message, internal } = classifyFailure(err, signal);
  return { message, internal };
}

/** A failure's metric label (classifyFailure's `label`). */
export function failureClass(err: unknown, signal: AbortSignal): FailureClass {
  return classifyFailure(err, signal).label;
}
