import dns from 'node:dns';
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';

import { ConfigError } from '../config.js';
import { inRange, type IpRange, parseAddress, parseRange } from '../ip-ranges.js';
import type { EgressTarget } from './policy.js';

/**
 * The company's HTTP proxy, which carries the service's outgoing connections where they cannot go
 * directly (`--proxy`, `--no-proxy`). It carries, it does not decide: each target is checked by
 * the egress policy first, and the proxy is asked for a tunnel (CONNECT) to the very address the
 * policy checked, never to the name, so the proxy's own DNS answer cannot change what was allowed.
 */
export interface UpstreamProxy {
  host: string;
  port: number;
  /** The `Proxy-Authorization` value, from the URL's user and password. @default none */
  authorization?: string;
  /** Host names (`wiki.corp.example`), domains (`.corp.example`: it and every name under it) and ranges reached directly. */
  noProxy: { names: string[]; domains: string[]; ranges: IpRange[] };
}

/**
 * Reads `http://[user:password@]host[:port]` (port 80 when none) and the no-proxy list. Throws a
 * ConfigError for anything else, never quoting the URL, which may hold a password.
 */
export function parseUpstreamProxy(text: string, noProxy: readonly string[] = []): UpstreamProxy {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('the proxy must be a URL: http://[user:password@]host:port');
  }
  if (url.protocol !== 'http:') throw new ConfigError(`the proxy must be an http:// URL (an HTTP proxy), not ${url.protocol}`);
  if (url.pathname !== '/' || url.search || url.hash) throw new ConfigError('the proxy URL takes no path, query or fragment: http://[user:password@]host:port');
  const user = decodeURIComponent(url.username);
  const authorization = url.username || url.password ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
  const rules: UpstreamProxy['noProxy'] = { names: [], domains: [], ranges: [] };
  for (const entry of noProxy.map((e) => e.trim().toLowerCase().replace(/\.+$/, '')).filter(Boolean)) {
    const range = parseRange(entry);
    if (range) rules.ranges.push(range);
    else if (entry.startsWith('*.') || entry.startsWith('.')) rules.domains.push(entry.replace(/^\*?\./, ''));
    else rules.names.push(entry);
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || 80, authorization, noProxy: rules };
}

/** Whether a target, asked for by `host` and checked as `address`, is reached without the upstream proxy. */
export function bypassesProxy(upstream: UpstreamProxy, host: string, address: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  const { names, domains, ranges } = upstream.noProxy;
  if (names.includes(name)) return true;
  if (domains.some((domain) => name === domain || name.endsWith(`.${domain}`))) return true;
  const ip = parseAddress(address);
  return ip !== null && ranges.some((range) => inRange(ip, range));
}

/** The upstream proxy refused a tunnel, or answered something that is not one. */
export class UpstreamProxyError extends Error {
  override readonly name = 'UpstreamProxyError';
  /** The marker the egress proxy gives the browser (x-egress-unreachable). */
  readonly code = 'EPROXY';
}

/**
 * A connection to a checked target: directly, or through a CONNECT tunnel of the upstream proxy
 * to its address. Resolves once bytes can flow to the target; rejects with the socket's error, a
 * time-out, or an UpstreamProxyError naming the proxy's answer.
 */
export function connectTarget(upstream: UpstreamProxy | undefined, host: string, target: EgressTarget, port: number, timeoutMs: number): Promise<net.Socket> {
  if (!upstream || bypassesProxy(upstream, host, target.address)) {
    return opened(net.connect({ host: target.address, port, family: target.family }), timeoutMs);
  }
  const authority = target.family === 6 ? `[${target.address}]:${port}` : `${target.address}:${port}`;
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: upstream.host,
      port: upstream.port,
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, ...(upstream.authorization ? { 'proxy-authorization': upstream.authorization } : {}) },
      agent: false,
      timeout: timeoutMs,
    });
    req.once('connect', (res, socket, head) => {
      req.setTimeout(0);
      if (res.statusCode !== 200) {
        socket.destroy();
        return reject(new UpstreamProxyError(`the upstream proxy answered ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
      }
      if (head.length) socket.unshift(head);
      resolve(socket);
    });
    req.once('response', (res) => {
      res.resume();
      reject(new UpstreamProxyError(`the upstream proxy answered ${res.statusCode} to CONNECT`));
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error('the upstream proxy did not answer in time'), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.end();
  });
}

function opened(socket: net.Socket, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    socket.setTimeout(timeoutMs, () => socket.destroy(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })));
    socket.once('connect', () => {
      socket.setTimeout(0);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Time to open a tunnel for a webhook or an upload. */
const CARRIED_CONNECT_TIMEOUT_MS = 10_000;

/**
 * HTTP and HTTPS agents of Node (webhooks, uploads) whose connections the upstream proxy carries:
 * each goes as a tunnel to the address the request's `lookup` answers, which is the egress
 * policy's pinned, vetted one (got's `dnsLookup`, the S3 client's agent `lookup`); TLS is then
 * spoken through the tunnel with the request's own server name and authorities. A target of the
 * no-proxy list, and every target when `upstream` is undefined, is connected directly.
 */
// A mixin's base must be a constructor of `any[]` arguments (TypeScript's rule for mixins).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function carriedAgentClass<A extends new (...args: any[]) => http.Agent>(Agent: A, upstream: UpstreamProxy | undefined, secure: boolean): A {
  if (!upstream) return Agent;
  return class extends Agent {
    override createConnection(options: http.ClientRequestArgs & tls.ConnectionOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
      const done = callback ?? (() => undefined);
      const host = (options.host ?? 'localhost').replace(/^\[|\]$/g, '');
      const port = Number(options.port) || (secure ? 443 : 80);
      const lookup = (options.lookup ?? dns.lookup) as LookupFunction;
      lookup(host, { all: false }, (err, address, family) => {
        if (err) return done(err, undefined as never);
        const target: EgressTarget = { address: address as string, family: family === 6 ? 6 : 4 };
        if (bypassesProxy(upstream, host, target.address)) return void super.createConnection(options, callback);
        connectTarget(upstream, host, target, port, CARRIED_CONNECT_TIMEOUT_MS).then(
          (socket) => done(null, secure ? tls.connect({ ...options, host, socket }) : socket),
          (failed: Error) => done(failed, undefined as never),
        );
      });
      return undefined;
    }
  };
}
