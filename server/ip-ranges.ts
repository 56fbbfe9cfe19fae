import ipaddr from 'ipaddr.js';

/** An IPv4 or IPv6 address as ipaddr.js parses it. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A network: its address and prefix length, `[10.0.0.0, 8]`; a lone address is a /32 or /128. */
export type IpRange = [IpAddress, number];

/**
 * The one parser of IP addresses given as text, for a key's whitelist, the trusted proxies and
 * the egress guard's allowed ranges (the control panel checks the same way with ipaddr.js).
 * Brackets (`[::1]`) and a zone (`fe80::1%eth0`) are dropped, and an IPv4-mapped IPv6 address
 * (`::ffff:10.0.0.1`) becomes plain IPv4, so it matches IPv4 ranges. IPv4 must be four decimal
 * parts: `1.2.3` and `0x7f.1` are legal to inet_aton but never what a person means here.
 */
export function parseAddress(text: string): IpAddress | null {
  const bare = text.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!bare.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return null;
  if (!ipaddr.isValid(bare)) return null;
  try {
    return ipaddr.process(bare);
  } catch {
    return null;
  }
}

/**
 * Parses a range, `address/prefix`, or a lone address; null when it is neither. The address is
 * read as parseAddress reads it; the prefix is a whole number without leading zeros, at most 32
 * for IPv4 and 128 for IPv6. A mapped IPv6 range (`::ffff:10.0.0.0/104`) becomes its IPv4 range.
 * Surrounding spaces are ignored.
 */
export function parseRange(text: string): IpRange | null {
  const value = text.trim();
  if (/\s/.test(value)) return null;
  const slash = value.indexOf('/');
  if (slash < 0) {
    const address = parseAddress(value);
    return address && [address, address.kind() === 'ipv4' ? 32 : 128];
  }
  const prefix = value.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix)) return null;
  const bits = Number(prefix);
  const written = value.slice(0, slash);
  // Parsed before a mapped address is unwrapped, so the prefix is read against what was written.
  if (!parseAddress(written)) return null;
  const address = ipaddr.parse(written.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (bits > (address.kind() === 'ipv4' ? 32 : 128)) return null;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

/** The first address of the range: `10.1.2.3/8` → `10.0.0.0`. */
export function networkOf(address: IpAddress, bits: number): IpAddress {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes) as IpAddress;
}

/** Canonical text of a range: `10.0.0.0/8`, `2001:db8::/32`, or the lone address `192.0.2.7`. */
export function rangeText([address, bits]: IpRange): string {
  return bits === (address.kind() === 'ipv4' ? 32 : 128) ? address.toString() : `${networkOf(address, bits).toString()}/${bits}`;
}

/** True when `address` is inside `range`; an address of the other family never is. */
export function inRange(address: IpAddress, [base, bits]: IpRange): boolean {
  return base.kind() === address.kind() && address.match(base, bits);
}
