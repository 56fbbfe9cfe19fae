import type http from 'node:http';
import type https from 'node:https';
import type { LookupFunction } from 'node:net';

import got, { TimeoutError } from 'got';

import type { NetworkScope } from '../egress/network-scope.js';
import { EgressDeniedError, type EgressPolicy } from '../egress/policy.js';

/** How one delivery attempt ended and what it means for the next one. */
export interface AttemptOutcome {
  /** `success` for 2xx; `stop` for 410 or an egress denial; `retry` for everything else. */
  verdict: 'success' | 'retry' | 'stop';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The receiver's Retry-After header, unparsed. */
  retryAfter?: string;
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendDeps {
  policy: EgressPolicy;
  /** The network scope of the key whose job or monitor the webhook tells of. @default none: the policy's settings alone */
  scope?: NetworkScope;
  /** Whole attempt, from DNS to the response head. */
  timeoutMs: number;
  agents: { http: http.Agent; https: https.Agent };
  signal?: AbortSignal;
  now?: () => number;
}

/**
 * POSTs one signed webhook. The callback URL goes through the egress policy first and the
 * connection is pinned to the address the policy vetted (got's DNS lookup answers with it), so
 * the name cannot be rebound between the check and the connect; the URL and with it the Host
 * header and the TLS server name stay those of the callback. Redirects are not followed (a 3xx
 * is a failed attempt), got never retries (the delivery schedule does), and only the status line
 * and headers are read: the response body is discarded unread.
 */
export async function sendWebhook(request: SendRequest, deps: SendDeps): Promise<AttemptOutcome> {
  const now = deps.now ?? Date.now;
  const started = now();
  const done = (
    verdict: AttemptOutcome['verdict'],
    statusCode: number | null,
    error: string | null,
    retryAfter?: string,
  ): AttemptOutcome => ({
    verdict,
    statusCode,
    error,
    durationMs: Math.max(0, now() - started),
    ...(retryAfter ? { retryAfter } : {}),
  });

  let target: Awaited<ReturnType<EgressPolicy['checkUrl']>>;
  try {
    target = await deps.policy.checkUrl(request.url, deps.scope);
  } catch (err) {
    if (err instanceof EgressDeniedError) return done('stop', null, err.message);
    return done('retry', null, `cannot resolve the callback host: ${(err as Error).message}`);
  }

  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };

  return new Promise<AttemptOutcome>((resolve) => {
    const stream = got.stream.post(target.url, {
      body: request.body,
      headers: request.headers,
      dnsLookup: pinned,
      agent: deps.agents,
      timeout: { request: deps.timeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      signal: deps.signal,
    });
    stream.once('response', (response: http.IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const retryAfter = response.headers['retry-after'];
      stream.destroy();
      if (status >= 200 && status < 300) return resolve(done('success', status, null));
      if (status === 410) return resolve(done('stop', status, 'the receiver answered 410 Gone'));
      const why = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `the receiver answered ${status}`;
      resolve(done('retry', status, why, typeof retryAfter === 'string' ? retryAfter : undefined));
    });
    // `on`, not `once`: a destroyed stream may still report an error after the outcome is known.
    stream.on('error', (err: Error & { code?: string }) => {
      const error =
        err instanceof TimeoutError || err.code === 'ETIMEDOUT'
          ? `timed out after ${deps.timeoutMs} ms`
          : `${err.code ?? err.name}: ${err.message}`;
      resolve(done('retry', null, error));
    });
  });
}
