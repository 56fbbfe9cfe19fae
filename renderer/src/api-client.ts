/** Every admin request ends after this long, so a stuck server never freezes the panel. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * The server refuses a state-changing request that arrives with the session cookie but without
 * this header. A cross-site form or image cannot set it, and a cross-site fetch that sets it
 * needs a CORS preflight the admin API never grants.
 */
export const CSRF_HEADER = { 'X-Requested-With': 'screenshot-appliance' } as const;

/** An error answer of the admin API: `{error, message}` and the HTTP status. */
export class ApiRequestError extends Error {
  override readonly name = 'ApiRequestError';
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  method?: Method;
  body?: unknown;
  signal?: AbortSignal;
}

/** Listeners told when the session is gone, so the app can show the sign-in form. */
const unauthorizedListeners = new Set<() => void>();

export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const method = options.method ?? 'GET';
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { Accept: 'application/json', ...CSRF_HEADER };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body, signal, credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    const timedOut = timeout.aborted;
    throw new ApiRequestError(0, 'Network error', timedOut ? 'The server did not answer in time.' : 'The server cannot be reached.');
  }
  if (!res.ok) throw await toError(res, path);
  return res;
}

async function toError(res: Response, path: string): Promise<ApiRequestError> {
  let title = res.statusText || 'Error';
  let message = `The server answered ${res.status}.`;
  try {
    const parsed = (await res.json()) as { error?: string; message?: string };
    if (parsed.error) title = parsed.error;
    if (parsed.message) message = parsed.message;
  } catch {
    // Not JSON (a proxy page, say): keep the generic message.
  }
  // Signing in is itself a 401 on a wrong token; that is a form error, not a lost session.
  if (res.status === 401 && path !== SESSION_PATH) unauthorizedListeners.forEach((l) => l());
  return new ApiRequestError(res.status, title, message);
}

/** Calls the admin API and parses the JSON answer; `undefined` for 204. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const res = await send(path, options);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** Calls the admin API for a text answer (the captured HTML of a job). */
export async function apiText(path: string, options: RequestOptions = {}): Promise<string> {
  const res = await send(path, options);
  return res.text();
}

export const SESSION_PATH = '/admin/api/session';

/** Builds a query string from the parameters that have a value. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
