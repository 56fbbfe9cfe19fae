import type { NetworkScope } from './admin-types.js';
import { whitelistEntryError } from './ip-whitelist.js';

// Checks a key's network scope entries in the browser, so a typo is pointed out next to the field
// before anything is sent. The rule is the server's (server/egress/network-scope.ts): a CIDR range
// or single address read as the IP whitelist reads it, or a host name as the URL parser reads it.
// The server checks again and has the last word.

/** Letters, digits, hyphens and underscores, in labels of at most 63 joined by dots (the server's rule). */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Text that can only mean an address: digits, dots and a prefix, or anything with a colon (IPv6). */
const looksLikeAddress = (entry: string) => /^[\d./]+$/.test(entry) || entry.includes(':') || entry.startsWith('[');

/** What is wrong with one scope entry, in words for the field's error line; null when it is valid. */
export function scopeEntryError(raw: string): string | null {
  const entry = raw.trim();
  if (entry === '') return 'Enter a CIDR range or a host name.';
  if (looksLikeAddress(entry)) return whitelistEntryError(entry);
  const neither = `“${entry}” is neither a CIDR range nor a host name (e.g. 10.20.0.0/16 or wiki.corp.example).`;
  if (/[\s/\\@?#[\]%]/.test(entry)) return neither;
  let host: string;
  try {
    host = new URL(`http://${entry}/`).hostname.replace(/\.+$/, '');
  } catch {
    return neither;
  }
  return HOST_NAME.test(host) && !/^[\d.]+$/.test(host) ? null : neither;
}

/** The words a scope reads as in the keys table and next to the account's default. */
export function scopeLabel(scope: NetworkScope): string {
  if (scope === 'public') return 'Public internet only';
  if (scope === 'lan') return 'LAN';
  return scope.join(', ');
}
