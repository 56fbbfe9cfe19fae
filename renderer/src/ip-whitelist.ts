import ipaddr from 'ipaddr.js';

// Checks IP whitelist and egress entries in the browser, so a typo is pointed out next to the
// field before anything is sent. The rule is the server's (server/ip-ranges.ts), read with the
// same ipaddr.js; the server checks again and has the last word.

/** Four decimal parts, no leading zeros: `1.2.3` and `0x7f.1` are never what a person means. */
export function isIPv4(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text);
}

/** An IPv6 address, compressed or not, with or without an IPv4 tail. */
export function isIPv6(text: string): boolean {
  return ipaddr.IPv6.isValid(text) && !text.includes('%');
}

/** The address as the server reads it: without brackets (`[::1]`) or a zone (`fe80::1%eth0`). */
const bare = (text: string) => text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');

/** What is wrong with one entry, in words for the field's error line; null when it is valid. */
export function whitelistEntryError(raw: string): string | null {
  const entry = raw.trim();
  if (entry === '') return 'Enter an IP address or a CIDR range.';
  const slash = entry.indexOf('/');
  const address = bare(slash < 0 ? entry : entry.slice(0, slash));
  const v4 = isIPv4(address);
  if (/\s/.test(entry) || (!v4 && !isIPv6(address))) {
    return `“${slash < 0 ? entry : entry.slice(0, slash)}” is not an IPv4 or IPv6 address (e.g. 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32).`;
  }
  if (slash < 0) return null;
  const prefix = entry.slice(slash + 1);
  const max = v4 ? 32 : 128;
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix) || Number(prefix) > max) {
    return `In “${entry}”, the prefix length after “/” must be a whole number from 0 to ${max}.`;
  }
  return null;
}
