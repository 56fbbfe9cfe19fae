import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../server/domain-errors.js';
import { canonicalScope } from '../../server/egress/network-scope.js';
import { createEgressPolicy, EgressDeniedError, type Resolver } from '../../server/egress/policy.js';
import { startEgressProxy } from '../../server/egress/proxy.js';

// Names only this test knows, all on loopback but the metadata one.
const resolve: Resolver = async (host) => {
  if (host === 'wiki.test' || host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'lan.test') return [{ address: '10.20.3.4', family: 4 }];
  if (host === 'metadata.test') return [{ address: '169.254.169.254', family: 4 }];
  throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
};

const refusal = async (promise: Promise<unknown>): Promise<EgressDeniedError> => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EgressDeniedError);
  return err as EgressDeniedError;
};

// The ways of writing 127.0.0.1 a page or a client may try.
const LOOPBACK_FORMS = [
  'http://127.0.0.1/',
  'HTTP://127.0.0.1:8080/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://127.0.0.1./',
  'http://%31%32%37.0.0.1/',
  'http://trusted.example@127.0.0.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://[0:0:0:0:0:ffff:7f00:1]/',
  'http://LOCALHOST./',
];

describe("a key's network scope in the egress policy", () => {
  // The admin allows loopback 127.0.0.1 (a LAN fixture in these tests) and leaves the LAN open.
  const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve, localAddresses: () => [] });

  it.each(LOOPBACK_FORMS)('keeps a "public" key from %s although the admin allows it', async (url) => {
    const err = await refusal(policy.checkUrl(url, 'public'));
    expect(err.message).toMatch(/^blocked by egress policy: (127\.0\.0\.1 is|::ffff:7f00:1 is the IPv4-mapped form of 127\.0\.0\.1,|localhost resolves to 127\.0\.0\.1,) outside the network scope "public" of the key$/);
    expect(err.kind).toBe('scope');
  });

  it.each(LOOPBACK_FORMS)('lets a "lan" key, and a key granted 127.0.0.1/32, reach %s', async (url) => {
    await expect(policy.checkUrl(url, 'lan')).resolves.toMatchObject({ address: expect.stringMatching(/127\.0\.0\.1|7f00:1/) });
    await expect(policy.checkUrl(url, ['127.0.0.1/32'])).resolves.toBeTruthy();
  });

  it('keeps a "public" key from the LAN and lets it reach public addresses', async () => {
    expect((await refusal(policy.checkUrl('http://10.20.3.4/', 'public'))).message).toMatch(/10\.20\.3\.4 is outside the network scope "public"/);
    expect((await refusal(policy.checkUrl('http://lan.test/', 'public'))).message).toMatch(/lan\.test resolves to 10\.20\.3\.4, outside/);
    expect((await refusal(policy.checkUrl('http://[fd00::1]/', 'public'))).message).toMatch(/fd00::1 is outside/);
    await expect(policy.checkUrl('http://93.184.215.14/', 'public')).resolves.toMatchObject({ address: '93.184.215.14' });
    await expect(policy.checkUrl('http://[::ffff:93.184.215.14]/', 'public')).resolves.toBeTruthy();
  });

  it('lets a listed range reach its addresses and no other private one', async () => {
    const scope = ['10.20.0.0/16'];
    await expect(policy.checkUrl('http://lan.test/', scope)).resolves.toMatchObject({ address: '10.20.3.4' });
    await expect(policy.checkUrl('http://[::ffff:10.20.3.4]/', scope)).resolves.toBeTruthy();
    const err = await refusal(policy.checkUrl('http://10.21.0.1/', scope));
    expect(err.message).toMatch(/10\.21\.0\.1 is outside the network scope \[10\.20\.0\.0\/16\] of the key/);
    await refusal(policy.checkUrl('http://127.0.0.1/', scope));
  });

  it('lets a key granted a host name reach that name and not another name on the same address', async () => {
    const scope = ['wiki.test'];
    for (const url of ['http://wiki.test/', 'http://WIKI.Test./', 'http://wiki%2etest/', 'http://user@wiki.test:8080/']) {
      await expect(policy.checkUrl(url, scope)).resolves.toMatchObject({ address: '127.0.0.1' });
    }
    await expect(policy.checkHost('WIKI.TEST.', 443, scope)).resolves.toMatchObject({ address: '127.0.0.1' });
    const other = await refusal(policy.checkUrl('http://other.test/', scope));
    expect(other.message).toBe('blocked by egress policy: other.test resolves to 127.0.0.1, outside the network scope [wiki.test] of the key');
    await refusal(policy.checkHost('other.test', 443, scope));
    for (const url of LOOPBACK_FORMS) await refusal(policy.checkUrl(url, scope));
  });

  it("never lifts the admin's ceiling: loopback and link-local still need the admin's allow", async () => {
    expect((await refusal(policy.checkUrl('http://127.0.0.2/', ['127.0.0.0/8']))).kind).toBe('loopback');
    expect((await refusal(policy.checkUrl('http://metadata.test/', ['metadata.test']))).kind).toBe('link_local');
    expect((await refusal(policy.checkUrl('http://[::ffff:169.254.169.254]/', ['169.254.0.0/16']))).kind).toBe('link_local');
    const noLan = createEgressPolicy({ allow: [], denyLan: true }, { resolve, localAddresses: () => [] });
    expect((await refusal(noLan.checkUrl('http://lan.test/', ['10.20.0.0/16']))).kind).toBe('lan');
  });
});

describe('the stored form of a network scope', () => {
  it('writes ranges canonically and names in lower case, punycode, without trailing dots', () => {
    expect(canonicalScope(['10.20.1.2/16', '::ffff:10.0.0.0/104', '192.0.2.7', 'WIKI.Corp.Example.', 'bücher.example', 'wiki.corp.example'])).toEqual([
      '10.20.0.0/16',
      '10.0.0.0/8',
      '192.0.2.7',
      'wiki.corp.example',
      'xn--bcher-kva.example',
    ]);
    expect(canonicalScope('public')).toBe('public');
  });

  it.each(['http://wiki.test/', 'wiki.test:8080', '0x7f.1', '10.1', '127.1', 'a b', '*.corp.example', 'user@wiki.test', '10.0.0.0/33', ''])(
    'refuses the entry %j, naming the field',
    (entry) => {
      expect(() => canonicalScope([entry])).toThrow(ValidationError);
      expect(() => canonicalScope([entry])).toThrow(/network_scope/);
    },
  );
});

describe("a door of the egress proxy for a key's scope", () => {
  /** What the door answers a raw request: its status line. */
  async function ask(port: number, request: string): Promise<string> {
    const socket = net.connect(port, '127.0.0.1');
    socket.write(request);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n')) socket.destroy();
    });
    await new Promise((resolve) => socket.on('close', resolve));
    return text.split('\r\n')[0];
  }

  it('decides on the name asked in CONNECT and in absolute-form requests, however it is written', async () => {
    const site = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    const { port } = site.address() as AddressInfo;
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve, localAddresses: () => [] });
    const proxy = await startEgressProxy({ policy });
    try {
      const door = Number(new URL(await proxy.urlFor(['wiki.test'])).port);
      const connect = (authority: string) => ask(door, `CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
      const get = (url: string) => ask(door, `GET ${url} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      for (const host of ['wiki.test', 'WIKI.TEST', 'wiki.test.', 'Wiki.Test..']) {
        expect(await connect(`${host}:${port}`), host).toBe('HTTP/1.1 200 Connection Established');
        expect(await get(`http://${host}:${port}/`), host).toBe('HTTP/1.1 200 OK');
      }
      for (const host of ['other.test', '127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::ffff:127.0.0.1]', 'localhost', 'wiki.test.other.test']) {
        expect(await connect(`${host}:${port}`), host).toMatch(/^HTTP\/1\.1 (403|502)/);
        expect(await get(`http://${host}:${port}/`), host).toMatch(/^HTTP\/1\.1 (403|502)/);
      }
      // The browser's own door (no scope) lets the admin-allowed address through.
      expect(await ask(proxy.port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)).toBe('HTTP/1.1 200 Connection Established');
    } finally {
      await proxy.close();
      await new Promise((done) => site.close(done));
    }
  });
});
