import { describe, expect, it } from 'vitest';

import { clientAddress } from '../../server/auth/client-address.js';
import { canonicalEntry, canonicalWhitelist, isAllowed, normalizeAddress } from '../../server/ip-whitelist.js';

describe('IP whitelist', () => {
  it('allows everyone when the list is empty', () => {
    expect(isAllowed([], '203.0.113.9')).toBe(true);
  });

  it('matches single IPv4 addresses and CIDR ranges', () => {
    const list = ['192.0.2.10', '10.0.0.0/8'];
    expect(isAllowed(list, '192.0.2.10')).toBe(true);
    expect(isAllowed(list, '192.0.2.11')).toBe(false);
    expect(isAllowed(list, '10.200.3.4')).toBe(true);
    expect(isAllowed(list, '11.0.0.1')).toBe(false);
  });

  it('matches IPv6 addresses and ranges', () => {
    const list = ['2001:db8::/32', '::1'];
    expect(isAllowed(list, '2001:db8:1234::5')).toBe(true);
    expect(isAllowed(list, '2001:db9::1')).toBe(false);
    expect(isAllowed(list, '::1')).toBe(true);
  });

  it('treats an IPv4-mapped caller as its IPv4 address', () => {
    expect(isAllowed(['10.0.0.0/8'], '::ffff:10.1.2.3')).toBe(true);
    expect(isAllowed(['10.0.0.0/8'], '::ffff:192.0.2.1')).toBe(false);
    expect(normalizeAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it('treats a mapped IPv6 range as the IPv4 range it covers', () => {
    expect(canonicalEntry('::ffff:10.0.0.0/104')).toBe('10.0.0.0/8');
    expect(isAllowed(['::ffff:10.0.0.0/104'], '10.9.9.9')).toBe(true);
  });

  it('never throws when an IPv6 range meets an IPv4 caller, or the reverse', () => {
    expect(isAllowed(['2001:db8::/32'], '192.0.2.1')).toBe(false);
    expect(isAllowed(['192.0.2.0/24'], '2001:db8::1')).toBe(false);
    expect(isAllowed(['192.0.2.0/24'], 'not-an-address')).toBe(false);
  });

  it('canonicalises entries and masks host bits of ranges', () => {
    expect(canonicalWhitelist([' 10.1.2.3/8 ', '2001:DB8::1/32', '10.0.0.0/8'])).toEqual(['10.0.0.0/8', '2001:db8::/32']);
  });

  it('refuses entries that are neither an address nor a range, naming them', () => {
    expect(() => canonicalWhitelist(['10.0.0.0/33'])).toThrow(/10\.0\.0\.0\/33/);
    expect(() => canonicalWhitelist(['example.com'])).toThrow(/example\.com/);
    expect(() => canonicalWhitelist(['1.2.3'])).toThrow(/1\.2\.3/);
    expect(() => canonicalWhitelist('10.0.0.1')).toThrow(/array/);
  });
});

describe('client address', () => {
  it('uses the socket address and ignores X-Forwarded-For from untrusted peers', () => {
    expect(clientAddress('::ffff:192.0.2.5', '10.0.0.1', [])).toBe('192.0.2.5');
    expect(clientAddress('192.0.2.5', '10.0.0.1', ['127.0.0.1'])).toBe('192.0.2.5');
  });

  it('takes the nearest untrusted hop when the peer is a trusted proxy', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.7, 10.0.0.2', ['127.0.0.1', '10.0.0.0/8'])).toBe('198.51.100.7');
  });
});
