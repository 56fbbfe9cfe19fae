import { describe, expect, it } from 'vitest';

import { scopeEntryError, scopeLabel } from '../../renderer/src/network-scope.js';
import { canonicalScope } from '../../server/egress/network-scope.js';

describe('network scope entry check in the control panel', () => {
  it('accepts CIDR ranges, single addresses and host names', () => {
    for (const entry of ['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1', 'wiki.corp.example', 'WIKI.Corp.Example.', 'grafana', 'host_1.lan', 'bücher.example']) {
      expect(scopeEntryError(entry), entry).toBeNull();
    }
  });

  it('refuses a prefix beyond the address family and an octet above 255, naming the entry', () => {
    expect(scopeEntryError('10.0.0.0/33')).toContain('from 0 to 32');
    expect(scopeEntryError('10.0.0.300')).toContain('“10.0.0.300” is not an IPv4 or IPv6 address');
  });

  it('refuses what is neither a range nor a host name', () => {
    for (const entry of ['wiki.corp.example:8080', 'http://wiki.corp.example', 'wiki corp', '-wiki.example', `${'a'.repeat(64)}.example`, 'a@b.example']) {
      expect(scopeEntryError(entry), entry).not.toBeNull();
    }
  });

  it('agrees with the server on every entry it accepts or refuses', () => {
    for (const entry of ['10.0.0.0/8', 'wiki.corp.example', 'WIKI.Corp.Example.', 'bücher.example', '10.0.0.0/33', 'wiki.corp.example:8080', '-wiki.example', '1.2.3', 'host_1.lan']) {
      let server = true;
      try {
        canonicalScope([entry]);
      } catch {
        server = false;
      }
      expect(scopeEntryError(entry) === null, entry).toBe(server);
    }
  });

  it('asks for a value when the entry is empty', () => {
    expect(scopeEntryError('  ')).toBe('Enter a CIDR range or a host name.');
  });

  it('reads a scope in short for the keys table', () => {
    expect(scopeLabel('public')).toBe('Public internet only');
    expect(scopeLabel('lan')).toBe('LAN');
    expect(scopeLabel(['10.0.0.0/8', 'wiki.corp.example'])).toBe('10.0.0.0/8, wiki.corp.example');
  });
});
