import net from 'node:net';

import { ValidationError } from '../domain-errors.js';
import { inRange, type IpAddress, type IpRange, parseRange, rangeText } from '../ip-ranges.js';

/**
 * A NetworkScope is what an API key's captures and webhooks may reach, inside the admin's egress
 * settings (the ceiling, which still denies loopback and link-local unless the admin allowed them):
 * - `"lan"`: whatever the ceiling allows (public and LAN addresses by default);
 * - `"public"`: public addresses only, never a private, loopback or link-local one, even one
 *   the admin allowed;
 * - a list of CIDR ranges and host names: public addresses, and the private ones the list names.
 *   A host-name entry grants the name asked for (whatever it resolves to), not the address: a
 *   key granted `wiki.corp.example` cannot reach another name on the wiki's address.
 * The contract's NetworkScope (server/contract/admin.ts, above this layer) has the same shape.
 */
export type NetworkScope = 'public' | 'lan' | string[];

/** The scope of keys made before scopes, and the default of an account's new keys: today's behaviour. */
export const DEFAULT_NETWORK_SCOPE: NetworkScope = 'lan';

/** Host names as a scope lists them: letters, digits, hyphens and underscores, in labels joined by dots. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * The stored form of a scope the schema accepted: each range in canonical text (`10.20.0.0/16`),
 * each host name in lower case without trailing dots, IDN in punycode, duplicates dropped.
 * Throws ValidationError naming the entry that is neither.
 */
export function canonicalScope(scope: NetworkScope): NetworkScope {
  return typeof scope === 'string' ? scope : canonicalEntries(scope);
}

function canonicalEntries(list: string[]): string[] {
  const entries = list.map((entry) => {
    const range = parseRange(entry);
    if (range) return rangeText(range);
    const name = canonicalName(entry);
    if (!name) {
      throw new ValidationError(
        `network_scope: "${entry}" is neither a CIDR range (IPv4 as four decimal parts) nor a host name`,
        'network_scope',
      );
    }
    return name;
  });
  return [...new Set(entries)];
}

/** A host name as the URL parser reads it (lower case, punycode, no trailing dots); null for anything else, IP literals included. */
function canonicalName(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed || /[\s/\\:@?#[\]%]/.test(trimmed)) return null;
  let host: string;
  try {
    host = new URL(`http://${trimmed}/`).hostname.replace(/\.+$/, '');
  } catch {
    return null;
  }
  if (net.isIP(host) || /^[0-9.]+$/.test(host) || !HOST_NAME.test(host)) return null;
  return host;
}

/** How a scope reads in a refusal: `"public"`, or the list. */
export function scopeText(scope: NetworkScope): string {
  return typeof scope === 'string' ? `"${scope}"` : `[${scope.join(', ')}]`;
}

/**
 * A scope ready for the egress policy: says whether an address, reached by the name asked for,
 * is inside it. The host is the name as the policy canonicalised it (or an IP literal).
 */
export class ScopeRule {
  private readonly ranges: IpRange[];
  private readonly names: Set<string>;

  constructor(readonly scope: NetworkScope) {
    const entries = typeof scope === 'string' ? [] : canonicalEntries(scope);
    this.ranges = entries.map((entry) => parseRange(entry)).filter((range): range is IpRange => range !== null);
    this.names = new Set(entries.filter((entry) => !parseRange(entry)));
  }

  /** True when the scope adds nothing to the ceiling. */
  get isLan(): boolean {
    return this.scope === 'lan';
  }

  /**
   * Whether `host`, resolved to `ip`, is inside the scope. `embedded` are the IPv4 addresses an
   * IPv6 address carries (mapped, NAT64, 6to4, Teredo…): such an address is inside only when
   * every one it carries is, so a mapped form never reaches what the plain one could not.
   */
  allows(host: string, ip: IpAddress, embedded: IpAddress[]): boolean {
    if (this.isLan) return true;
    if (this.names.has(host)) return true;
    const inside = (address: IpAddress) => address.range() === 'unicast' || this.ranges.some((range) => inRange(address, range));
    return embedded.length > 0 ? embedded.every(inside) : inside(ip);
  }
}
