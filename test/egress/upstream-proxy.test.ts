import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../server/config.js';
import { createEgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { startEgressProxy } from '../../server/egress/proxy.js';
import { parseUpstreamProxy } from '../../server/egress/upstream-proxy.js';
import { guardedS3Client } from '../../server/uploads/guarded-s3.js';
import { type TestServer, testServerForFile, waitForJob } from '../helpers/test-server.js';
import { startReceiver } from '../webhooks/receiver.js';

/** A company proxy on loopback: opens the tunnels it is asked for (but to port 1234), noting each request. */
interface TestProxy {
  port: number;
  /** "CONNECT target" and the Proxy-Authorization of each request. */
  seen: Array<{ request: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

async function startTestProxy(): Promise<TestProxy> {
  const seen: TestProxy['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ request: `${req.method} ${req.url}`, authorization: req.headers['proxy-authorization'] });
    res.writeHead(405).end();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push({ request: `CONNECT ${req.url}`, authorization: req.headers['proxy-authorization'] });
    const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.slice(req.url!.lastIndexOf(':') + 1))];
    if (port === 1234) return void client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    const target = net.connect({ host, port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) target.write(head);
      target.pipe(client);
      client.pipe(target);
    });
    target.on('error', () => client.destroy());
    client.on('error', () => target.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A LAN site answering every name with a page titled by it, and `/to-other` with a redirect to other.test. */
async function startSite(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (req.url === '/to-other') return void res.writeHead(302, { location: `http://other.test:${port}/` }).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${host}</title><h1>${host}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const resolve: Resolver = async (host) => {
  if (['wiki.test', 'other.test', 'direct.test'].includes(host)) return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
};

// Started before the server, whose config names the proxy's port.
const proxy = await startTestProxy();
let site: { port: number; close(): Promise<void> };
beforeAll(async () => {
  site = await startSite();
});
afterAll(async () => {
  await site?.close();
  await proxy.close();
});

describe('an upstream proxy (--proxy)', () => {
  const server = testServerForFile(
    { browsers: 1, ratePerSecond: 1000, upstreamProxy: `http://corp:p%40ss@127.0.0.1:${proxy.port}`, noProxy: ['direct.test'] },
    { resolve },
  );
  const at = (host: string, path = '/') => `http://${host}:${site.port}${path}`;
  const tunnels = () => proxy.seen.filter((s) => s.request.startsWith('CONNECT')).length;

  async function capture(url: string, scope: unknown = 'lan', extra: Record<string, unknown> = {}) {
    const { key } = await (server as TestServer).account({}, { network_scope: scope });
    const created = await (await server.v1('POST', '/screenshot', key, { url, ...extra })).json();
    return waitForJob(server, key, created.job_id);
  }

  async function firstAttempt(jobId: string): Promise<{ status_code: number | null; error: string | null }> {
    for (let i = 0; i < 100; i++) {
      const delivery = (await server.admin('GET', `/webhooks?job_id=${jobId}`)).body.deliveries[0];
      if (delivery?.attempts.length) return delivery.attempts[0];
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no webhook attempt for ${jobId}`);
  }

  it("carries a job's webhook, and refuses one outside the key's scope without asking it", async () => {
    const receiver = await startReceiver();
    try {
      const hookTunnels = () => proxy.seen.filter((s) => s.request === `CONNECT 127.0.0.1:${receiver.port}`).length;
      const job = await capture(at('wiki.test'), ['wiki.test'], { callback_url: `http://wiki.test:${receiver.port}/hook` });
      expect(await firstAttempt(job.job_id)).toMatchObject({ status_code: 200, error: null });
      expect(hookTunnels()).toBe(1);
      const refused = await capture(at('wiki.test'), ['wiki.test'], { callback_url: `http://other.test:${receiver.port}/hook` });
      expect((await firstAttempt(refused.job_id)).error).toMatch(/other\.test resolves to 127\.0\.0\.1, outside the network scope \[wiki\.test\]/);
      expect(hookTunnels()).toBe(1);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it("carries an upload to an account's bucket", async () => {
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    const record = { _id: 'a', endpoint: at('wiki.test').replace(/\/$/, ''), bucket: 'shots', prefix: '', region: 'us-east-1', path_style: true, access_key_hint: '', sealed_credentials: '', updated_at: 0 };
    const upstream = parseUpstreamProxy(`http://127.0.0.1:${proxy.port}`);
    const s3 = await guardedS3Client({ record, credentials: { access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } }, policy, {}, { upstream });
    const before = tunnels();
    try {
      await s3.client.send(new PutObjectCommand({ Bucket: 'shots', Key: 'a.png', Body: Buffer.from('png') }));
    } finally {
      s3.close();
    }
    expect(tunnels()).toBe(before + 1);
  });

  it('carries a capture as a tunnel to the address the guard checked, with its credentials', async () => {
    const job = await capture(at('wiki.test'));
    expect(job).toMatchObject({ status: 'completed', page_title: 'wiki.test' });
    expect(proxy.seen).toContainEqual({ request: `CONNECT 127.0.0.1:${site.port}`, authorization: `Basic ${Buffer.from('corp:p@ss').toString('base64')}` });
  });

  it("still refuses what a key's scope refuses, before anything reaches the upstream proxy", async () => {
    const before = tunnels();
    const denied = await capture(at('127.0.0.1'), 'public');
    expect(denied.error).toMatch(/127\.0\.0\.1 is outside the network scope "public" of the key/);
    const redirected = await capture(at('wiki.test', '/to-other'), ['wiki.test']);
    expect(redirected.status).toBe('failed');
    expect(redirected.error).toMatch(/other\.test resolves to 127\.0\.0\.1, outside the network scope \[wiki\.test\] of the key/);
    // The page at wiki.test went through the proxy; other.test never did.
    expect(tunnels()).toBe(before + 1);
  });

  it('reaches a target of --no-proxy directly', async () => {
    const before = tunnels();
    expect(await capture(at('direct.test'))).toMatchObject({ status: 'completed', page_title: 'direct.test' });
    expect(tunnels()).toBe(before);
  });

  it('fails a job the upstream proxy will not carry, saying so', async () => {
    const job = await capture('http://wiki.test:1234/');
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/the upstream proxy \(--proxy\) would not carry the connection/);
  });
});

describe('the egress proxy in front of an upstream proxy', () => {
  /** Opens a CONNECT tunnel through the egress proxy and GETs / through it; the answer's first line, or the refusal's. */
  async function throughTunnel(egressPort: number, authority: string): Promise<string> {
    const socket = net.connect(egressPort, '127.0.0.1');
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.startsWith('HTTP/1.1 200') && text.endsWith('\r\n\r\n') && !text.includes('GET')) {
        text += 'GET sent\n';
        socket.write(`GET / HTTP/1.1\r\nhost: wiki.test\r\nconnection: close\r\n\r\n`);
      }
    });
    await new Promise((resolve) => socket.on('close', resolve));
    return text;
  }

  it('carries an allowed tunnel through it, and refuses a denied one without asking it', async () => {
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    const egress = await startEgressProxy({ policy, upstream: parseUpstreamProxy(`http://127.0.0.1:${proxy.port}`) });
    try {
      const scoped = new URL(await egress.urlFor(['wiki.test']));
      const before = proxy.seen.length;
      expect(await throughTunnel(Number(scoped.port), `wiki.test:${site.port}`)).toMatch(/GET sent\nHTTP\/1\.1 200 OK[\s\S]*<title>wiki\.test<\/title>/);
      expect(proxy.seen.slice(before)).toEqual([{ request: `CONNECT 127.0.0.1:${site.port}`, authorization: undefined }]);
      expect(await throughTunnel(Number(scoped.port), `other.test:${site.port}`)).toMatch(/^HTTP\/1\.1 403[\s\S]*outside the network scope \[wiki\.test\]/);
      expect(proxy.seen.length).toBe(before + 1);
    } finally {
      await egress.close();
    }
  });
});

describe('the --proxy setting', () => {
  it('is read from SCREENSHOT_PROXY and SCREENSHOT_NO_PROXY', () => {
    const config = loadConfig({ SCREENSHOT_PROXY: 'http://proxy.corp:3128', SCREENSHOT_NO_PROXY: '.corp.example, 10.0.0.0/8' });
    expect(config).toMatchObject({ upstreamProxy: 'http://proxy.corp:3128', noProxy: ['.corp.example', '10.0.0.0/8'] });
  });

  it.each(['https://proxy.corp:3128', 'socks5://proxy.corp:1080', 'http://proxy.corp:3128/path', 'proxy.corp:3128'])('refuses %s without quoting it', (url) => {
    const secret = url.replace('proxy.corp', 'user:hunter2@proxy.corp');
    expect(() => parseUpstreamProxy(secret)).toThrow(ConfigError);
    try {
      parseUpstreamProxy(secret);
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});
