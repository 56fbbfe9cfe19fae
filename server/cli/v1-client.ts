import { UsageError } from './usage-error.js';

/** One call of a running server's v1 API with a key: its status, Retry-After (seconds) and parsed body, read by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call(server: string, key: string, method: string, route: string, body?: unknown): Promise<{ status: number; retryAfter: number; body: any }> {
  const res = await fetch(`${server}/v1${route}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  }).catch((err: unknown) => {
    throw new UsageError(`The server at ${server} does not answer (${(err as Error).message}); is it running? (--server URL)`);
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { message: text };
  }
  return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 1), body: parsed };
}

