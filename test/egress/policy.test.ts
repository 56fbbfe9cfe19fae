import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../server/domain-errors.js';
import {
  createEgressPolicy,
  EgressDeniedError,
  HostLookupTimeoutError,
  HostNotFoundError,
  type Resolver,
} from '../../server/egress/policy.js';

const noDns: Resolver = async (host) => {
  throw Object.assign(new Error(`no DNS in this test (${host})`), { code: 'ENOTFOUND' });
};

const denied = async (promise: Promise<unknown>): Promise<string> => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EgressDeniedError);
  return (err as EgressDeniedError).message;
};

describe('egress policy', () => {
  const policy = createEgressPolicy({ allow: [], denyLan: false }, { resolve: noDns, localAddresses: () => [] });

  it.each([
    'http://127.0.0.2/',
    'HTTP://127.0.0.2/',
    'http://2130706434/',
    'http://0x7f000002/',
    'http://0x7f.0.0.2/',
    'http://0177.0.0.2/',
    'http://0177.0.0.02/',
    'http://127.2/',
    'http://127.0.0.2./',
    'http://127.0.0.2%2e/',
    'http://%31%32%37.0.0.2/',
    'http://trusted.example@127.0.0.2/',
    'http://trusted.example:pw@127.0.0.2:8080/',
    'http://127.0.0.2\\@trusted.example/',
    'http://[::ffff:127.0.0.2]/',
    'http://[0:0:0:0:0:ffff:7f00:2]/',
    'http://[::127.0.0.2]/',
    'http://[::ffff:0:127.0.0.2]/',
    'http://[64:ff9b::127.0.0.2]/',
    'http://[64:ff9b:1::7f00:2]/',
    'http://[2002:7f00:2::]/',
    'https://localhost/',
    'http://LOCALHOST./',
    'http://evil.localhost/',
    'http://[::1]/',
    'http://[0:0:0:0:0:0:0:1]/',
  ])('denies %s as loopback', async (url) => {
    expect(await denied(policy.checkUrl(url))).toMatch(/loopback address/);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['http://0.0.0.0:8080/', '0.0.0.0 is an unspecified address'],
    ['http://0/', '0.0.0.0 is an unspecified address'],
    ['http://[::]/', ':: is an unspecified address'],
    ['http://224.0.0.1/', '224.0.0.1 is a multicast address'],
    ['http://[ff02::1]/', 'ff02::1 is a multicast address'],
    ['http://255.255.255.255/', '255.255.255.255 is a broadcast address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is the IPv4-mapped form of 169.254.169.254, a link-local address'],
    ['http://[2002:a9fe:a9fe::1]/', '2002:a9fe:a9fe::1 is the 6to4 form of 169.254.169.254, a link-local address'],
    // Teredo: server 65.54.227.120 (public), client 127.0.0.1 stored inverted as 80ff:fffe.
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', '2001:0:4136:e378:8000:63bf:80ff:fffe is the Teredo client form of 127.0.0.1, a loopback address'],
    // Client 169.254.169.254 inverted.
    ['http://[2001:0:4136:e378:8000:63bf:5601:5601]/', '2001:0:4136:e378:8000:63bf:5601:5601 is the Teredo client form of 169.254.169.254, a link-local address'],
    // Server 127.0.0.1, client 67.74.211.210 (public, inverted as bcb5:2c2d).
    ['http://[2001:0:7f00:1:8000:63bf:bcb5:2c2d]/', '2001:0:7f00:1:8000:63bf:bcb5:2c2d is the Teredo server form of 127.0.0.1, a loopback address'],
  ])('denies %s with the reason "%s"', async (url, reason) => {
    expect(await denied(policy.checkUrl(url))).toBe(`blocked by egress policy: ${reason}`);
  });

  it('names the address in the message, as jobs report it', async () => {
    expect(await denied(policy.checkUrl('http://127.0.0.2:9/'))).toBe(
      'blocked by egress policy: 127.0.0.2 is a loopback address',
    );
  });

  it.each(['ftp://example.com/', 'file:///etc/passwd', 'ws://example.com/', 'data:text/html,hi', 'javascript:alert(1)', 'not a url'])(
    'refuses %s, which is not an http(s) URL',
    async (url) => {
      await denied(policy.checkUrl(url));
    },
  );

  it('allows a Teredo address whose client and server are both public', () => {
    expect(policy.deniedReason('2001:0:4136:e378:8000:63bf:bcb5:2c2d')).toBeNull();
  });

  it('denies the LAN client of a Teredo address when denyLan is set', () => {
    const strict = createEgressPolicy({ allow: [], denyLan: true }, { resolve: noDns, localAddresses: () => [] });
    // Client 10.0.0.1 inverted is f5ff:fffe.
    expect(strict.deniedReason('2001:0:4136:e378:8000:63bf:f5ff:fffe')).toBe(
      '2001:0:4136:e378:8000:63bf:f5ff:fffe is the Teredo client form of 10.0.0.1, a private (LAN) address',
    );
  });

  it('allows public and LAN addresses by default', async () => {
    for (const url of ['http://93.184.216.34/', 'https://10.1.2.3/', 'http://192.168.1.20:8000/', 'http://172.16.0.1/', 'http://[fd00::1]/', 'http://[2606:4700::1]/']) {
      await expect(policy.checkUrl(url)).resolves.toMatchObject({ address: expect.any(String) });
    }
  });

  it('denies LAN ranges when denyLan is set, including their mapped forms', async () => {
    const strict = createEgressPolicy({ allow: [], denyLan: true }, { resolve: noDns, localAddresses: () => [] });
    expect(await denied(strict.checkUrl('http://192.168.1.20/'))).toMatch(/192\.168\.1\.20 is a private \(LAN\) address/);
    expect(await denied(strict.checkUrl('http://[fd00::1]/'))).toMatch(/unique-local/);
    expect(await denied(strict.checkUrl('http://[::ffff:10.0.0.1]/'))).toMatch(/IPv4-mapped form of 10\.0\.0\.1/);
    await expect(strict.checkUrl('http://93.184.216.34/')).resolves.toMatchObject({ address: '93.184.216.34' });
  });

  it('allows a range the admin lists although it is denied by default', async () => {
    const dev = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve: noDns, localAddresses: () => [] });
    await expect(dev.checkUrl('http://127.0.0.1:3000/')).resolves.toMatchObject({ address: '127.0.0.1', family: 4 });
    await expect(dev.checkUrl('http://localhost:3000/')).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(dev.checkUrl('http://[::ffff:127.0.0.1]:3000/')).resolves.toMatchObject({ address: '::ffff:7f00:1' });
    expect(await denied(dev.checkUrl('http://127.0.0.2:3000/'))).toMatch(/127\.0\.0\.2 is a loopback address/);
  });

  it("keeps the service's own port denied on local addresses even when loopback is allowed", async () => {
    const dev = createEgressPolicy(
      { allow: ['127.0.0.0/8', '::1/128', '192.168.7.0/24'], denyLan: false },
      { resolve: noDns, localAddresses: () => ['192.168.7.5', '127.0.0.1', '::1'] },
    );
    dev.denyLocalPort(8080);
    const ownPort = [
      'http://127.0.0.1:8080/admin/api/accounts',
      'http://127.9.9.9:8080/',
      'http://[::1]:8080/',
      'http://localhost:8080/',
      'http://0.0.0.0:8080/',
      'http://192.168.7.5:8080/',
      'http://[::ffff:127.0.0.1]:8080/',
    ];
    for (const url of ownPort) {
      expect(await denied(dev.checkUrl(url))).toMatch(/port 8080 belongs to this service/);
    }
    await expect(dev.checkUrl('http://127.0.0.1:8081/')).resolves.toBeTruthy();
    await expect(dev.checkUrl('http://192.168.7.6:8080/')).resolves.toBeTruthy();
  });

  it('resolves a hostname once and checks every address it answers', async () => {
    const calls: string[] = [];
    const resolve: Resolver = async (host) => {
      calls.push(host);
      return host === 'mixed.test'
        ? [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.2', family: 4 }]
        : [{ address: '93.184.216.34', family: 4 }];
    };
    const guarded = createEgressPolicy({ allow: [], denyLan: false }, { resolve, localAddresses: () => [] });
    expect(await denied(guarded.checkUrl('http://mixed.test/'))).toBe(
      'blocked by egress policy: mixed.test resolves to 127.0.0.2, a loopback address',
    );
    await expect(guarded.checkUrl('https://Public.Test./x')).resolves.toMatchObject({ address: '93.184.216.34' });
    expect(calls).toEqual(['mixed.test', 'public.test']);
  });

  it('returns the canonical URL with the host lower-cased and trailing dots removed', async () => {
    const guarded = createEgressPolicy({ allow: [], denyLan: false }, { resolve: async () => [{ address: '93.184.216.34', family: 4 }] });
    const { url } = await guarded.checkUrl('HTTPS://user@WWW.Example.COM.:443/a?b');
    expect(url.href).toBe('https://user@www.example.com/a?b');
  });

  it('fails a name that does not resolve with HostNotFoundError, not a denial, as it is no policy decision', async () => {
    const err = await policy.checkUrl('http://nowhere.test/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostNotFoundError);
    expect(err).toMatchObject({ host: 'nowhere.test', message: 'Could not resolve host nowhere.test' });
    const empty = createEgressPolicy({ allow: [], denyLan: false }, { resolve: async () => [] });
    await expect(empty.checkUrl('http://empty.test/')).rejects.toBeInstanceOf(HostNotFoundError);
  });

  it('fails a lookup the name server does not answer in time with HostLookupTimeoutError', async () => {
    const silent = createEgressPolicy({ allow: [], denyLan: false }, { resolve: () => new Promise(() => undefined), lookupTimeoutMs: 50 });
    const err = await silent.checkUrl('http://silent.test/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostLookupTimeoutError);
    expect(err).toMatchObject({ message: 'Timed out resolving host silent.test' });
    const timedOut = createEgressPolicy(
      { allow: [], denyLan: false },
      { resolve: async () => Promise.reject(Object.assign(new Error('queryA ETIMEOUT x'), { code: 'ETIMEOUT' })) },
    );
    await expect(timedOut.checkUrl('http://x.test/')).rejects.toBeInstanceOf(HostLookupTimeoutError);
  });

  it('passes an error that is not a resolver answer (no errno code) through as it is', async () => {
    const broken = createEgressPolicy({ allow: [], denyLan: false }, { resolve: async () => Promise.reject(new TypeError('a bug')) });
    await expect(broken.checkUrl('http://x.test/')).rejects.toBeInstanceOf(TypeError);
  });

  it('applies settings changes at run time', async () => {
    const live = createEgressPolicy({ allow: [], denyLan: false }, { resolve: noDns, localAddresses: () => [] });
    live.update({ denyLan: true });
    expect(live.deniedReason('10.0.0.1')).toBe('10.0.0.1 is a private (LAN) address');
    live.update({ allow: ['10.0.0.0/8'] });
    expect(live.deniedReason('10.0.0.1')).toBeNull();
    expect(live.options).toEqual({ allow: ['10.0.0.0/8'], denyLan: true });
    expect(() => live.update({ allow: ['10.0.0.0/33'] })).toThrow(ValidationError);
    expect(() => live.update({ allow: ['0x7f.1'] })).toThrow(ValidationError);
    expect(live.options.allow).toEqual(['10.0.0.0/8']);
  });
});
