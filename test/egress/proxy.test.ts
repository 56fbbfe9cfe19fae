import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createEgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { type EgressProxy, startEgressProxy } from '../../server/egress/proxy.js';
import { askTunnelRefusal } from '../../server/egress/tunnel-refusals.js';
import { lineLogger } from '../../server/logger.js';
import { closedPort } from '../helpers/ports.js';
import { type Canary, startCanary } from './canary.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request through the proxy in absolute form, as a browser sends plain HTTP. */
function viaProxy(proxy: EgressProxy, url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = http.request(
      { host: '127.0.0.1', port: proxy.port, method: init.method ?? 'GET', path: url, headers: { host: target.host, ...init.headers }, timeout: 5000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Sends CONNECT host:port and returns the proxy's status line and headers. */
function connect(proxy: EgressProxy, authority: string): Promise<{ head: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, '127.0.0.1');
    socket.setTimeout(5000, () => socket.destroy(new Error('timed out')));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      const end = data.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.removeAllListeners('data');
        resolve({ head: data.slice(0, end), socket });
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('the proxy closed the connection without answering')));
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

describe('egress proxy', () => {
  let canary: Canary;
  let origin: http.Server;
  let originUrl: string;
  let proxy: EgressProxy;
  const seen: Array<{ method: string; url: string; host: string; body: string; proxyHeader: boolean }> = [];
  const log: string[] = [];

  beforeAll(async () => {
    canary = await startCanary('127.0.0.2');
    origin = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host ?? '', body, proxyHeader: 'proxy-connection' in req.headers });
        // A page faking the proxy's refusal marker, in two spellings.
        const fake = req.url === '/fake-denial' ? [['X-Egress-Denied', 'fake'], ['x-EGRESS-denied', 'again'], ['X-Egress-Unreachable', 'ECONNREFUSED']] : [];
        res.writeHead(201, [['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x-origin', 'yes'], ['content-type', 'text/plain'], ...fake].flat());
        res.end(`echo:${body}`);
      });
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    const resolve: Resolver = async (host) =>
      host === 'origin.test' ? [{ address: '127.0.0.1', family: 4 }] : host === 'canary.test' ? [{ address: '127.0.0.2', family: 4 }] : [];
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    proxy = await startEgressProxy({ policy, log: lineLogger((line) => log.push(line)) });
  });

  afterAll(async () => {
    await proxy?.close();
    await canary?.close();
    origin?.closeAllConnections();
    await new Promise<void>((resolve) => origin.close(() => resolve()));
  });

  it('listens on 127.0.0.1 only', () => {
    expect(proxy.url).toBe(`http://127.0.0.1:${proxy.port}`);
  });

  it('forwards an allowed plain HTTP request with its method, path, body and Host, and relays the answer', async () => {
    const answer = await viaProxy(proxy, `${originUrl}/echo?x=1`, { method: 'POST', body: 'hello', headers: { 'proxy-connection': 'keep-alive' } });
    expect(answer.status).toBe(201);
    expect(answer.body).toBe('echo:hello');
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(answer.headers['x-origin']).toBe('yes');
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/echo?x=1', host: new URL(originUrl).host, body: 'hello', proxyHeader: false });
  });

  it('connects a vetted hostname to the address it was checked against, keeping its Host header', async () => {
    const port = new URL(originUrl).port;
    const answer = await viaProxy(proxy, `http://origin.test:${port}/named`);
    expect(answer.status).toBe(201);
    expect(seen.at(-1)).toMatchObject({ url: '/named', host: `origin.test:${port}` });
  });

  it('refuses a denied target with 403 and the reason in x-egress-denied', async () => {
    const answer = await viaProxy(proxy, `${canary.origin}/secret`);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-egress-denied']).toBe('127.0.0.2 is a loopback address');
    expect(answer.body).toBe('blocked by egress policy: 127.0.0.2 is a loopback address');
    expect(log.some((l) => l.includes('127.0.0.2 is a loopback address'))).toBe(true);
    expect(canary.hits()).toBe(0);
  });

  it("removes the proxy's markers, in any case, from a target's answer, so no page can fake a refusal", async () => {
    const answer = await viaProxy(proxy, `${originUrl}/fake-denial`);
    expect(answer.status).toBe(201);
    expect(answer.headers['x-egress-denied']).toBeUndefined();
    expect(answer.headers['x-egress-unreachable']).toBeUndefined();
    expect(answer.headers['x-origin']).toBe('yes');
  });

  it('answers 502 naming ENOTFOUND for a name that does not resolve', async () => {
    const answer = await viaProxy(proxy, 'http://nowhere.test/');
    expect(answer.status).toBe(502);
    expect(answer.headers['x-egress-unreachable']).toBe('ENOTFOUND');
  });

  it('refuses a hostname that resolves to a denied address', async () => {
    const answer = await viaProxy(proxy, `http://canary.test:${canary.port}/`);
    expect(answer.headers['x-egress-denied']).toBe('canary.test resolves to 127.0.0.2, a loopback address');
    expect(canary.hits()).toBe(0);
  });

  it('opens a CONNECT tunnel to an allowed target and carries bytes both ways', async () => {
    const { head, socket } = await connect(proxy, new URL(originUrl).host);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const reply = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (c) => {
        data += c.toString();
        if (data.includes('echo:')) resolve(data);
      });
      socket.write('GET /tunnelled HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n');
    });
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 201/);
    expect(seen.at(-1)?.url).toBe('/tunnelled');
  });

  it.each(['127.0.0.2:PORT', '2130706434:PORT', '0x7f000002:PORT', '[::ffff:127.0.0.2]:PORT', 'canary.test:PORT', '127.0.0.2.:PORT'])(
    'refuses CONNECT %s with 403 and x-egress-denied',
    async (form) => {
      const { head, socket } = await connect(proxy, form.replace('PORT', String(canary.port)));
      socket.destroy();
      expect(head).toMatch(/^HTTP\/1\.1 403/);
      expect(head).toMatch(/\r\nx-egress-denied: .*loopback address/);
      expect(canary.hits()).toBe(0);
    },
  );

  it('refuses to tunnel or forward to its own port', async () => {
    const { head, socket } = await connect(proxy, `127.0.0.1:${proxy.port}`);
    socket.destroy();
    expect(head).toMatch(/^HTTP\/1\.1 403/);
    expect(head).toContain(`port ${proxy.port} belongs to this service`);
    const answer = await viaProxy(proxy, `http://127.0.0.1:${proxy.port}/`);
    expect(answer.headers['x-egress-denied']).toContain('belongs to this service');
  });

  it("refuses the service's own port on loopback although 127.0.0.1 is allowed", async () => {
    const service = http.createServer((_req, res) => res.end('admin'));
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const port = (service.address() as AddressInfo).port;
    const policy = createEgressPolicy({ allow: ['127.0.0.0/8'], denyLan: false });
    policy.denyLocalPort(port);
    const own = await startEgressProxy({ policy });
    try {
      let hits = 0;
      service.on('request', () => hits++);
      const answer = await viaProxy(own, `http://127.0.0.1:${port}/admin/api/accounts`);
      expect(answer.status).toBe(403);
      expect(answer.headers['x-egress-denied']).toBe(`127.0.0.1 is a local address and port ${port} belongs to this service`);
      const tunnel = await connect(own, `localhost:${port}`);
      tunnel.socket.destroy();
      expect(tunnel.head).toMatch(/^HTTP\/1\.1 403/);
      expect(hits).toBe(0);
    } finally {
      await own.close();
      await new Promise<void>((resolve) => service.close(() => resolve()));
    }
  });

  it('vets an absolute-form upgrade request like any other and splices an allowed one', async () => {
    const upgrade = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const headers = {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-version': '13',
        };
        const req = http.request({ host: '127.0.0.1', port: proxy.port, path: url, headers, timeout: 5000 });
        req.on('upgrade', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    const control = await startCanary('127.0.0.1');
    try {
      expect(await upgrade(`${control.origin}/ws`)).toBe(101);
      expect(control.paths).toEqual(['/ws']);
      expect(await upgrade(`${canary.origin}/ws`)).toBe(403);
      expect(canary.hits()).toBe(0);
    } finally {
      await control.close();
    }
  });

  it('tells a local process which refusal a refused tunnel was, as Chromium shows nobody its answer', async () => {
    const ask = (url: string) => askTunnelRefusal(proxy.url, url);
    const denied = await connect(proxy, `127.0.0.2:${canary.port}`);
    denied.socket.destroy();
    expect(await ask(`https://127.0.0.2:${canary.port}/`)).toEqual({ denied: '127.0.0.2 is a loopback address' });

    const port = await closedPort();
    const refused = await connect(proxy, `127.0.0.1:${port}`);
    refused.socket.destroy();
    expect(await ask(`https://127.0.0.1:${port}/`)).toEqual({ unreachable: 'ECONNREFUSED' });

    expect(await ask('https://never-asked.test/')).toBeNull();
    expect(canary.hits()).toBe(0);
  });

  it('answers 400 to a request that is not in absolute form', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: proxy.port, path: '/', timeout: 5000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    expect(answer).toBe(400);
  });

  it('answers 502 when an allowed target is not listening, for requests and tunnels alike, naming the errno code', async () => {
    const port = await closedPort();
    const answer = await viaProxy(proxy, `http://127.0.0.1:${port}/`);
    expect(answer.status).toBe(502);
    expect(answer.headers['x-egress-denied']).toBeUndefined();
    expect(answer.headers['x-egress-unreachable']).toBe('ECONNREFUSED');
    const tunnel = await connect(proxy, `localhost:${port}`);
    tunnel.socket.destroy();
    expect(tunnel.head).toMatch(/^HTTP\/1\.1 502/);
  });
});
