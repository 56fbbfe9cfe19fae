import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { Duplex } from 'node:stream';

import { type Logger, silentLogger } from '../logger.js';
import type { NetworkScope } from './network-scope.js';
import { EgressDeniedError, type EgressPolicy, type EgressTarget } from './policy.js';
import { EGRESS_DENIED_HEADER, EGRESS_UNREACHABLE_HEADER, isProxyMarker } from './proxy-markers.js';
import { TUNNEL_REFUSAL_PATH, TunnelRefusals } from './tunnel-refusals.js';
import { bypassesProxy, connectTarget, type UpstreamProxy } from './upstream-proxy.js';

export interface EgressProxy {
  /** e.g. "http://127.0.0.1:41234", for Chromium's `--proxy-server`. */
  url: string;
  port: number;
  /**
   * The address of a door of the proxy that also holds every connection to `scope` (a key's
   * network scope), for a context's own proxy setting; `url` itself for `"lan"`, which adds
   * nothing to the policy. A door is opened at the first call for a scope and kept until close().
   */
  urlFor(scope: NetworkScope): Promise<string>;
  close(): Promise<void>;
}

/**
 * One listening socket of the proxy and the scope it applies: the proxy cannot tell whose a
 * connection is from what the browser sends (Chromium sends no credentials unasked), so each
 * scope gets its own port and a context is pointed at its key's. Each remembers its own refused
 * tunnels, since one target may be refused through one door and not through another.
 */
interface Door {
  server: http.Server;
  scope: NetworkScope | undefined;
  refusals: TunnelRefusals;
}

export interface EgressProxyDeps {
  policy: EgressPolicy;
  /** Where refusals and faults are reported. @default silentLogger */
  log?: Logger;
  /** Told of each refusal as it is made (the metrics count them by kind). @default none */
  onDenied?: (denial: EgressDeniedError) => void;
  /** Time to open a connection to the target. @default 10000 */
  connectTimeoutMs?: number;
  /** A request or tunnel with no traffic for this long is closed. @default 120000 */
  idleTimeoutMs?: number;
  /** The company's proxy, which carries each connection the policy allowed (upstream-proxy.ts). @default none: direct */
  upstream?: UpstreamProxy;
}

type Refuse = (status: number, headers: Record<string, string>, text: string) => void;

// Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own, never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The forward proxy every browser connection goes through, so the egress policy cannot be
 * skipped by redirects, sub-resources, WebSockets or workers. Plain HTTP arrives in absolute
 * form; HTTPS and WebSockets arrive as CONNECT tunnels. Each target host is resolved once by the
 * policy and the connection is opened to that checked address, so a DNS answer that changes
 * between the check and the connect (rebinding) cannot switch the target. Refusals answer 403
 * with `x-egress-denied: <reason>`, a target it cannot reach 502 with `x-egress-unreachable:
 * <errno code>` (for CONNECT, Chromium reports ERR_TUNNEL_CONNECTION_FAILED for both, so the
 * proxy remembers which it was for the engines to ask: tunnel-refusals.ts); those headers are
 * removed from every answer relayed from a target (see proxy-markers.ts).
 *
 * Listens on 127.0.0.1 only, and registers its own port with the policy so a page cannot use
 * the proxy to reach the proxy. Chromium must be started with `--proxy-server=<url>` and
 * `--proxy-bypass-list=<-loopback>` (see `egressChromiumArgs`), else loopback skips the proxy.
 */
export async function startEgressProxy(deps: EgressProxyDeps): Promise<EgressProxy> {
  const proxy = new ForwardProxy(deps);
  await proxy.listen();
  return proxy;
}

/** The egress proxy's server: one handler for absolute-form requests, CONNECT tunnels and upgrades (startEgressProxy). */
export class ForwardProxy implements EgressProxy {
  private readonly policy: EgressPolicy;
  private readonly log: Logger;
  private readonly onDenied: (denial: EgressDeniedError) => void;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly upstream: UpstreamProxy | undefined;
  private closing = false;
  private readonly sockets = new Set<net.Socket>();
  private readonly agent: http.Agent;
  private readonly main: Door;
  /** The doors of the scopes other than "lan", by the scope's JSON. */
  private readonly doors = new Map<string, Promise<string>>();
  private readonly opened = new Set<Door>();
  private listeningPort = 0;

  constructor(deps: EgressProxyDeps) {
    this.policy = deps.policy;
    this.log = deps.log ?? silentLogger;
    this.onDenied = (denial) => {
      try {
        deps.onDenied?.(denial);
      } catch {
        // Counting must never break the refusal it counts.
      }
    };
    this.connectTimeoutMs = deps.connectTimeoutMs ?? 10_000;
    this.idleTimeoutMs = deps.idleTimeoutMs ?? 120_000;
    this.upstream = deps.upstream;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: this.idleTimeoutMs });
    this.main = this.door(undefined);
  }

  /** A server whose every handler applies `scope` besides the policy. */
  private door(scope: NetworkScope | undefined): Door {
    const server = http.createServer();
    const door: Door = { server, scope, refusals: new TunnelRefusals() };
    server.on('request', this.guarded((req, res) => this.handleRequest(door, req, res), (_req, res) => res.destroy()));
    server.on('connection', (socket: net.Socket) => this.track(socket));
    server.on('connect', this.guarded((req, client, head) => this.handleConnect(door, req, client, head), (_req, client) => client.destroy()));
    server.on('upgrade', this.guarded((req, client, head) => this.handleUpgrade(door, req, client, head), (_req, client) => client.destroy()));
    server.on('clientError', (_err, socket) => socket.destroy());
    return door;
  }

  /** e.g. "http://127.0.0.1:41234", for Chromium's `--proxy-server`. */
  get url(): string {
    return `http://127.0.0.1:${this.listeningPort}`;
  }

  get port(): number {
    return this.listeningPort;
  }

  /** Listens on a free port of 127.0.0.1, and registers that port with the policy. */
  async listen(): Promise<void> {
    this.listeningPort = await this.open(this.main);
  }

  urlFor(scope: NetworkScope): Promise<string> {
    if (scope === 'lan') return Promise.resolve(this.url);
    const key = JSON.stringify(scope);
    let url = this.doors.get(key);
    if (!url) {
      url = this.open(this.door(scope)).then((port) => `http://127.0.0.1:${port}`);
      this.doors.set(key, url);
      url.catch(() => this.doors.delete(key));
    }
    return url;
  }

  /** Listens on a free port of 127.0.0.1 for a door, and registers that port with the policy. */
  private async open(door: Door): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      door.server.once('error', reject);
      door.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.opened.add(door);
    const { port } = door.server.address() as AddressInfo;
    this.policy.denyLocalPort(port);
    return port;
  }

  close(): Promise<void> {
    this.closing = true;
    const closing = [...this.opened].map((door) => new Promise<void>((resolve) => door.server.close(() => resolve())));
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    return Promise.all(closing).then(() => undefined);
  }

  /** Plain HTTP, in absolute form; and the engines asking why a tunnel was refused. */
  private async handleRequest(door: Door, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const refuse: Refuse = (status, headers, text) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(text);
    };
    if (req.url?.split('?')[0] === TUNNEL_REFUSAL_PATH) return door.refusals.answer(req, res);
    if (!req.url?.startsWith('http://')) {
      return refuse(400, {}, 'this is a forward proxy: send absolute http:// URLs, or CONNECT for https');
    }
    const target = await this.vet(req.url, () => this.policy.checkUrl(req.url as string, door.scope), refuse);
    if (!target) return;
    const port = Number(target.url.port) || 80;
    // Through the company's proxy, a tunnel to the checked address carries the request as it is.
    const carried = this.upstream && !bypassesProxy(this.upstream, target.url.hostname, target.address);
    const upstream = http.request({
      host: target.address,
      family: target.family,
      port,
      method: req.method,
      path: target.url.pathname + target.url.search,
      headers: forwardHeaders(req.rawHeaders),
      setHost: false,
      ...(carried
        ? {
            createConnection: (_options, done) => {
              this.connect(target.url.hostname, target, port).then((socket) => done(null, socket), (err: Error) => done(err, undefined as never));
              return undefined;
            },
          }
        : { agent: this.agent }),
      timeout: this.connectTimeoutMs,
    });
    upstream.once('socket', (socket) => {
      // The connect timeout is replaced by the idle timeout once the connection is open.
      const idle = () => upstream.setTimeout(this.idleTimeoutMs);
      if (socket.connecting) socket.once('connect', idle);
      else idle();
    });
    upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('the target did not answer in time'), { code: 'ETIMEDOUT' })));
    upstream.on('error', (err) => refuse(502, unreachable(err), `cannot reach ${target.url.host}: ${err.message}`));
    upstream.on('response', (answer) => {
      try {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardHeaders(answer.rawHeaders, isProxyMarker));
      } catch (err) {
        // A status line or header Node will not write back out; never let it reach the event loop.
        // The target's fault, not ours: no stack.
        this.log.warn({ host: target.url.host, reason: (err as Error).message }, 'unusable answer from the target');
        answer.destroy();
        return void res.destroy();
      }
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    req.on('error', () => upstream.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  /** HTTPS and WebSockets (Chromium tunnels ws:// and wss:// alike through CONNECT). */
  private async handleConnect(door: Door, req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const socket = client as net.Socket;
    socket.on('error', () => socket.destroy());
    const authority = parseAuthority(req.url ?? '');
    if (!authority) return refuseRaw(socket, 400, {}, 'CONNECT needs host:port');
    const { host, port } = authority;
    // Chromium shows nobody this answer: the engine asks afterwards what it was (TunnelRefusals).
    const refuse: Refuse = (status, headers, text) => {
      door.refusals.note(`${host}:${port}`, headers);
      refuseRaw(socket, status, headers, text);
    };
    const target = await this.vet(`${host}:${port}`, () => this.policy.checkHost(host, port, door.scope), refuse);
    if (!target) return;
    this.splice(socket, host, target, port, refuse, (upstream) => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
    });
  }

  /** An absolute-form request asking to upgrade (Chromium uses CONNECT instead, but a client could). */
  private async handleUpgrade(door: Door, req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const socket = client as net.Socket;
    socket.on('error', () => socket.destroy());
    const refuse: Refuse = (status, headers, text) => refuseRaw(socket, status, headers, text);
    if (!req.url?.startsWith('http://')) return refuse(400, {}, 'send absolute http:// URLs');
    const target = await this.vet(req.url, () => this.policy.checkUrl(req.url as string, door.scope), refuse);
    if (!target) return;
    this.splice(socket, target.url.hostname, target, Number(target.url.port) || 80, refuse, (upstream) => {
      const lines: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i].toLowerCase();
        if (name === 'proxy-connection' || name === 'proxy-authorization') continue;
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`);
      }
      upstream.write(`${req.method} ${target.url.pathname}${target.url.search} HTTP/1.1\r\n${lines.join('')}\r\n`);
      if (head.length) upstream.write(head);
    });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Checks a target; answers the refusal itself and returns null when it is not allowed. */
  private async vet<T>(what: string, check: () => Promise<T>, refuse: Refuse): Promise<T | null> {
    try {
      return await check();
    } catch (err) {
      if (err instanceof EgressDeniedError) {
        this.log.info({ target: what, reason: err.reason }, 'egress denied');
        this.onDenied(err);
        refuse(403, { [EGRESS_DENIED_HEADER]: err.reason }, err.message);
      } else {
        // A name that does not resolve (HostNotFoundError, HostLookupTimeoutError carry a code).
        refuse(502, unreachable(err), `cannot reach ${what}: ${(err as Error).message}`);
      }
      return null;
    }
  }

  /** A throw inside an async handler would be an unhandled rejection and end the whole service. */
  private guarded<A extends unknown[]>(handler: (...args: A) => Promise<void>, drop: (...args: A) => void): (...args: A) => void {
    return (...args: A) => {
      handler(...args).catch((err: unknown) => {
        this.log.error({ err }, 'a proxy handler failed; its connection is dropped');
        drop(...args);
      });
    };
  }

  /**
   * A connection to the vetted address of `host` (directly, or through the upstream proxy),
   * tracked so that close() cuts it.
   */
  private async connect(host: string, target: EgressTarget, port: number): Promise<net.Socket> {
    const socket = await connectTarget(this.upstream, host, target, port, this.connectTimeoutMs);
    this.track(socket);
    if (this.closing) socket.destroy();
    return socket;
  }

  /** Opens a connection to the vetted address and splices it to the client once it is open. */
  private splice(client: net.Socket, host: string, target: EgressTarget, port: number, refuse: Refuse, greet: (upstream: net.Socket) => void): void {
    let gone = false;
    client.once('close', () => (gone = true));
    this.connect(host, target, port).then(
      (upstream) => {
        if (gone) return void upstream.destroy();
        upstream.setTimeout(this.idleTimeoutMs, () => upstream.destroy());
        client.setTimeout(this.idleTimeoutMs, () => client.destroy());
        greet(upstream);
        upstream.pipe(client);
        client.pipe(upstream);
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      },
      (err: Error) => {
        if (!gone) refuse(502, unreachable(err), `cannot reach the target: ${err.message}`);
      },
    );
  }
}

/** The marker of an answer for a target that could not be reached: the error's errno code. */
function unreachable(err: unknown): Record<string, string> {
  const code = (err as NodeJS.ErrnoException)?.code;
  return { [EGRESS_UNREACHABLE_HEADER]: typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : 'EIO' };
}

/** Answers a CONNECT or upgrade request on the raw socket and closes it. */
function refuseRaw(socket: net.Socket, status: number, headers: Record<string, string>, text: string): void {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${lines}content-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** "host:port" or "[v6]:port" of a CONNECT request, canonicalised by the URL parser. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s/@:[\]\\?#]+):\d{1,5}$/.test(authority)) return null;
  try {
    const url = new URL(`http://${authority}`);
    const port = url.port ? Number(url.port) : 80;
    if (port < 1 || port > 65535) return null;
    return { host: url.hostname, port };
  } catch {
    return null;
  }
}

/**
 * Raw headers without hop-by-hop ones (nor those `drop` names), as a header object that keeps
 * repeated fields.
 */
function forwardHeaders(raw: string[], drop: (name: string) => boolean = () => false): Record<string, string | string[]> {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'connection') {
      for (const token of raw[i + 1].split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (named.has(name.toLowerCase()) || drop(name)) continue;
    const existing = headers[name];
    if (existing === undefined) headers[name] = raw[i + 1];
    else headers[name] = Array.isArray(existing) ? [...existing, raw[i + 1]] : [existing, raw[i + 1]];
  }
  return headers;
}
