import { ValidationError } from './domain-errors.js';
import { inRange, type IpRange, parseAddress, parseRange, rangeText } from './ip-ranges.js';

/** The canonical text of a client address (IPv4-mapped addresses shown as IPv4). */
export function normalizeAddress(text: string): string {
  return parseAddress(text)?.toString() ?? text;
}

/**
 * Parses one whitelist entry, an address or a CIDR range, IPv4 or IPv6 (see parseRange).
 * Throws a ValidationError naming the entry when it is neither.
 */
export function parseWhitelistEntry(entry: unknown): IpRange {
  if (typeof entry !== 'string' || !entry.trim()) {
    throw new ValidationError(`ip_whitelist entry ${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
  const range = parseRange(entry);
  if (!range) {
    throw new ValidationError(`ip_whitelist entry "${entry.trim()}" is not an IP address or CIDR range (e.g. 192.168.1.10, 10.0.0.0/8, 2001:db8::/32)`);
  }
  return range;
}

/** Canonical text of a whitelist entry, as stored: `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`. */
export function canonicalEntry(entry: unknown): string {
  return rangeText(parseWhitelistEntry(entry));
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
  return entries.some((entry) => inRange(address, parseWhitelistEntry(entry)));
}
