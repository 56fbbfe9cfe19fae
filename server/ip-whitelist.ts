import ipaddr from 'ipaddr.js';

import { ValidationError } from './domain-errors.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** Parses an address, unwrapping IPv4-mapped IPv6 (`::ffff:10.0.0.1`) to plain IPv4. */
export function parseAddress(text: string): Address | null {
  const bare = text.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // Only dotted quads: "1.2.3" or "0x7f.1" are legal to inet_aton but never meant here.
  if (!bare.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return null;
  if (!ipaddr.isValid(bare)) return null;
  try {
    return ipaddr.process(bare);
  } catch {
    return null;
  }
}

/** The canonical text of a client address (IPv4-mapped addresses shown as IPv4). */
export function normalizeAddress(text: string): string {
  return parseAddress(text)?.toString() ?? text;
}

/**
 * Parses one whitelist entry, an address or a CIDR range, IPv4 or IPv6. A mapped IPv6
 * range (`::ffff:10.0.0.0/104`) becomes its IPv4 range so it matches IPv4 callers.
 * Throws a ValidationError naming the entry when it is neither.
 */
export function parseWhitelistEntry(entry: unknown): Range {
  if (typeof entry !== 'string' || !entry.trim()) {
    throw new ValidationError(`ip_whitelist entry ${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
  const text = entry.trim();
  const invalid = () =>
    new ValidationError(`ip_whitelist entry "${text}" is not an IP address or CIDR range (e.g. 192.168.1.10, 10.0.0.0/8, 2001:db8::/32)`);
  if (!text.includes('/')) {
    const address = parseAddress(text);
    if (!address) throw invalid();
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  }
  let range: Range;
  if (!parseAddress(text.slice(0, text.indexOf('/')))) throw invalid();
  try {
    range = ipaddr.parseCIDR(text);
  } catch {
    throw invalid();
  }
  const [address, bits] = range;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return range;
}

/** Canonical text of a whitelist entry, as stored: `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`. */
export function canonicalEntry(entry: unknown): string {
  const [address, bits] = parseWhitelistEntry(entry);
  const full = address.kind() === 'ipv4' ? 32 : 128;
  return bits === full ? address.toString() : `${networkOf(address, bits).toString()}/${bits}`;
}

function networkOf(address: Address, bits: number): Address {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes) as Address;
}

/** Validates and canonicalises a whole whitelist; duplicates collapse. */
export function canonicalWhitelist(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ValidationError('ip_whitelist must be an array of IP addresses or CIDR ranges');
  if (value.length > 256) throw new ValidationError('ip_whitelist holds at most 256 entries');
  return [...new Set(value.map(canonicalEntry))];
}

/**
 * True when `clientAddress` is inside one of the entries. An empty list allows everyone.
 * Entries of the other family never match (and never throw): an IPv6 range against an
 * IPv4 caller is simply no match.
 */
export function isAllowed(entries: readonly string[], clientAddress: string): boolean {
  if (entries.length === 0) return true;
  const address = parseAddress(clientAddress);
  if (!address) return false;
  return entries.some((entry) => {
    const [range, bits] = parseWhitelistEntry(entry);
    return range.kind() === address.kind() && address.match(range, bits);
  });
}
