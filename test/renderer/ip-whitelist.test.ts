import { describe, expect, it } from 'vitest';

import { isIPv4, isIPv6, whitelistEntryError } from '../../renderer/src/ip-whitelist.js';

describe('whitelist entry check in the control panel', () => {
  it('accepts IPv4 addresses and CIDR ranges', () => {
    for (const entry of ['203.0.113.7', '0.0.0.0', '255.255.255.255', '10.0.0.0/8', '127.0.0.1/32', '0.0.0.0/0', ' 192.168.1.0/24 ']) {
      expect(whitelistEntryError(entry), entry).toBeNull();
    }
  });

  it('accepts IPv6 addresses, compressed forms, an IPv4 tail and CIDR ranges', () => {
    for (const entry of ['::1', '::', '2001:db8::/32', 'fe80::1', '2001:0db8:0000:0000:0000:ff00:0042:8329', '::ffff:192.0.2.1', '1:2:3:4:5:6:7::', '::/0', '2001:db8::/128']) {
      expect(whitelistEntryError(entry), entry).toBeNull();
    }
  });

  it('refuses an octet above 255 and names the entry', () => {
    expect(whitelistEntryError('10.0.0.300')).toContain('“10.0.0.300” is not an IPv4 or IPv6 address');
  });

  it('refuses malformed addresses', () => {
    for (const entry of ['10.0.0', '10.0.0.1.2', '010.0.0.1', 'example.com', '1::2::3', '12345::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8::', '::ffff:300.0.0.1', '10.0.0.-1']) {
      expect(whitelistEntryError(entry), entry).not.toBeNull();
    }
  });

  it('refuses a prefix length beyond the address family', () => {
    expect(whitelistEntryError('10.0.0.0/33')).toContain('from 0 to 32');
    expect(whitelistEntryError('2001:db8::/129')).toContain('from 0 to 128');
    expect(whitelistEntryError('10.0.0.0/')).toContain('from 0 to 32');
    expect(whitelistEntryError('10.0.0.0/8/8')).not.toBeNull();
    expect(whitelistEntryError('10.0.0.0/08')).not.toBeNull();
  });

  it('asks for a value when the entry is empty', () => {
    expect(whitelistEntryError('   ')).toBe('Enter an IP address or a CIDR range.');
  });

  it('tells the families apart', () => {
    expect(isIPv4('192.0.2.1')).toBe(true);
    expect(isIPv6('192.0.2.1')).toBe(false);
    expect(isIPv6('2001:db8::1')).toBe(true);
    expect(isIPv4('2001:db8::1')).toBe(false);
  });
});
