import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';

import ipaddr from 'ipaddr.js';

import { withDeadline } from '../deadline.js';
import { ValidationError } from '../domain-errors.js';
import { inRange, type IpRange, parseRange } from '../ip-ranges.js';
import { type NetworkScope, ScopeRule, scopeText } from './network-scope.js';

/** What the admin can change about the egress guard (`--egress-allow`, settings API). */
export interface EgressPolicyOptions {
  /** CIDR ranges (or single addresses) allowed although they are denied by default. @default [] */
  allow: string[];
  /** Deny the LAN ranges too (RFC 1918, 100.64.0.0/10, fc00::/7). @default false */
  denyLan: boolean;
}

/**
 * How a refusal reads wherever it is shown: a webhook's attempt, the proxy's answer, a job whose
 * page (or a redirect of it) the proxy refused.
 */
export const egressDeniedMessage = (reason: string) => `blocked by egress policy: ${reason}`;

/** A connection the egress policy refused; the message is safe to show to clients. */
export class EgressDeniedError extends Error {
  override readonly name = 'EgressDeniedError';
  constructor(
    readonly reason: string,
    /** What kind of target was refused, decided with the refusal (the `reason` label of egress_denied_total). */
    readonly kind: EgressDenialKind,
  ) {
    super(egressDeniedMessage(reason));
  }
}

/** What kind of target a denial refused: a fixed list, where the reason's text names addresses. */
export type EgressDenialKind = 'loopback' | 'link_local' | 'lan' | 'own_port' | 'special' | 'scheme' | 'invalid' | 'scope';

/**
 * A host name that could not be resolved: no such name, no addresses, or no name server
 * answering (EAI_AGAIN, the usual sign of a machine without DNS). `cause` is the resolver's error.
 */
export class HostNotFoundError extends Error {
  override readonly name = 'HostNotFoundError';
  readonly code = 'ENOTFOUND';
  constructor(
    readonly host: string,
    options?: ErrorOptions,
  ) {
    super(`Could not resolve host ${host}`, options);
  }
}

/** The name server did not answer for a host name in time. */
export class HostLookupTimeoutError extends Error {
  override readonly name = 'HostLookupTimeoutError';
  readonly code = 'ETIMEOUT';
  constructor(
    readonly host: string,
    options?: ErrorOptions,
  ) {
    super(`Timed out resolving host ${host}`, options);
  }
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

/** A vetted target: connect to `address`, never to the hostname again. */
export interface EgressTarget {
  address: string;
  family: 4 | 6;
}

/**
 * The one decision point for every outbound connection of the service: the page to capture,
 * its redirects and sub-requests (through the egress proxy) and webhook deliveries.
 */
export interface EgressPolicy {
  /**
   * Canonicalises the URL (scheme case, decimal/octal/hex IPv4, bracketed/mapped IPv6, user@host,
   * trailing dots, *.localhost), rejects non-http(s), resolves the host ONCE (a .invalid or .onion
   * name never: HostNotFoundError at once), checks every address; returns the vetted address to
   * pin the connection to. Throws EgressDeniedError, or HostNotFoundError / HostLookupTimeoutError
   * when the name does not resolve. With a key's `scope`, every address must also be inside it
   * (network-scope.ts), decided on the same canonical name and the same answers.
   */
  checkUrl(url: string, scope?: NetworkScope): Promise<{ url: URL } & EgressTarget>;
  /** The same check for a bare host and port (a proxy CONNECT target), with the same errors. */
  checkHost(hostname: string, port: number, scope?: NetworkScope): Promise<EgressTarget>;
  /** Reason string when the address is denied, null when allowed. */
  deniedReason(address: string, port?: number): string | null;
  /** Settings changes at run time; throws ValidationError for a range that does not parse. */
  update(options: Partial<EgressPolicyOptions>): void;
  /** Ports on local addresses that stay denied even when loopback is allowed (the service's own port). */
  denyLocalPort(port: number): void;
  readonly options: Readonly<EgressPolicyOptions>;
}

export interface EgressPolicyDeps {
  /** Name resolution; called once per check. @default the system resolver (dns.lookup, all addresses) */
  resolve?: Resolver;
  /** This machine's interface addresses, on which the denied local ports apply. @default os.networkInterfaces() */
  localAddresses?: () => string[];
  /** Time one resolution may take. @default 10000 */
  lookupTimeoutMs?: number;
}

const LOOKUP_TIMEOUT_MS = 10_000;
/** What node's resolvers (dns.lookup and dns.Resolver) call a name server that did not answer in time. */
const LOOKUP_TIMEOUT_CODES = new Set(['ETIMEOUT', 'ETIMEDOUT']);

// ipaddr.js range names -> how they read in a denial, for ranges denied whatever the LAN setting.
const ALWAYS_DENIED: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  reserved: 'a reserved address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
};

/** The kind of each always-denied range that is not `special`. */
const RANGE_KIND: Record<string, EgressDenialKind> = { loopback: 'loopback', linkLocal: 'link_local' };

/** A denial of one address: the phrase that explains it, and its kind. */
interface Denial {
  phrase: string;
  kind: EgressDenialKind;
}

const LAN: Record<string, string> = {
  private: 'a private (LAN) address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  uniqueLocal: 'a unique-local (LAN) address',
};

/**
 * Builds the egress policy. Default: public and LAN addresses allowed; loopback, link-local
 * (including 169.254.169.254), unspecified, multicast, broadcast and reserved addresses denied,
 * also when hidden in IPv4-mapped, IPv4-compatible, 6to4, NAT64 or Teredo IPv6 forms. `allow`
 * ranges lift a default denial. Ports registered with `denyLocalPort` stay denied on every local
 * address whatever the ranges say, so the guard is never a way into the service's admin API.
 *
 * The browser is driven over a pipe (playwright-core), so it has no debugging port to protect.
 */
export function createEgressPolicy(options: EgressPolicyOptions, deps: EgressPolicyDeps = {}): EgressPolicy {
  return new IpEgressPolicy(options, deps);
}

/** The egress policy over IP ranges and ports (createEgressPolicy says what it allows). */
export class IpEgressPolicy implements EgressPolicy {
  private readonly resolve: Resolver;
  private readonly localAddresses: () => string[];
  private readonly lookupTimeoutMs: number;
  private readonly deniedPorts = new Set<number>();
  private current: Readonly<EgressPolicyOptions> = Object.freeze({ allow: [], denyLan: false });
  private allowRanges: IpRange[] = [];

  constructor(options: EgressPolicyOptions, deps: EgressPolicyDeps = {}) {
    this.resolve = deps.resolve ?? systemResolver;
    this.localAddresses = deps.localAddresses ?? interfaceAddresses;
    this.lookupTimeoutMs = deps.lookupTimeoutMs ?? LOOKUP_TIMEOUT_MS;
    this.update(options);
  }

  get options(): Readonly<EgressPolicyOptions> {
    return this.current;
  }

  update(next: Partial<EgressPolicyOptions>): void {
    const merged = { ...this.current, ...definedOnly(next) };
    this.allowRanges = merged.allow.map(allowRange);
    this.current = Object.freeze({ allow: [...merged.allow], denyLan: Boolean(merged.denyLan) });
  }

  denyLocalPort(port: number): void {
    this.deniedPorts.add(port);
  }

  async checkUrl(raw: string, scope?: NetworkScope): Promise<{ url: URL } & EgressTarget> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new EgressDeniedError('the address is not a valid URL', 'invalid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EgressDeniedError(`only http and https are allowed, not ${url.protocol.slice(0, -1)}`, 'scheme');
    }
    url.hostname = canonicalHost(url.hostname);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const target = await this.checkHost(url.hostname, port, scope);
    return { url, ...target };
  }

  async checkHost(hostname: string, port: number, scope?: NetworkScope): Promise<EgressTarget> {
    const host = canonicalHost(hostname);
    let targets: EgressTarget[];
    if (net.isIP(host)) {
      targets = [{ address: host, family: net.isIPv6(host) ? 6 : 4 }];
    } else if (host === 'localhost' || host.endsWith('.localhost')) {
      // Browsers answer these names with loopback without asking DNS (RFC 6761); so do we.
      targets = [{ address: '127.0.0.1', family: 4 }];
    } else if (isNeverResolved(host)) {
      throw new HostNotFoundError(host);
    } else {
      targets = await lookup(this.resolve, host, this.lookupTimeoutMs);
    }
    const rule = scope === undefined ? undefined : new ScopeRule(scope);
    // Every answer is checked, so a name that mixes a public and a loopback address is refused.
    for (const target of targets) {
      const ip = parseAddress(target.address);
      if (!ip) throw new EgressDeniedError(`${host} resolves to ${target.address}, which is not an IP address`, 'invalid');
      const denied = this.denial(ip, port) ?? scopeDenial(rule, host, ip);
      if (denied) {
        const { phrase, kind } = denied;
        throw new EgressDeniedError(net.isIP(host) ? `${ip.toString()} is ${phrase}` : `${host} resolves to ${ip.toString()}, ${phrase}`, kind);
      }
    }
    return targets[0];
  }

  deniedReason(address: string, port?: number): string | null {
    const ip = parseAddress(address);
    if (!ip) return `${address} is not an IP address`;
    const denied = this.denial(ip, port);
    return denied && `${ip.toString()} is ${denied.phrase}`;
  }

  private allowed(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.allowRanges.some((range) => inRange(ip, range));
  }

  /** Why one address (no embedded form) is denied by the ranges, or null. */
  private rangeReason(ip: ipaddr.IPv4 | ipaddr.IPv6): Denial | null {
    if (this.allowed(ip)) return null;
    const range = ip.range();
    if (range in ALWAYS_DENIED) return { phrase: ALWAYS_DENIED[range], kind: RANGE_KIND[range] ?? 'special' };
    if (this.current.denyLan && range in LAN) return { phrase: LAN[range], kind: 'lan' };
    return null;
  }

  /** What is wrong with an address, as a phrase to follow "<address> is" or "<host> resolves to <address>,", and its kind. */
  private denial(ip: ipaddr.IPv4 | ipaddr.IPv6, port?: number): Denial | null {
    const ownPort = (candidate: ipaddr.IPv4 | ipaddr.IPv6) =>
      port !== undefined && this.deniedPorts.has(port) && isLocal(candidate, this.localAddresses);
    if (ownPort(ip)) return { phrase: `a local address and port ${port} belongs to this service`, kind: 'own_port' };
    const own = this.rangeReason(ip);
    if (own) return own;
    for (const embedded of embeddedIPv4(ip)) {
      const inner = this.rangeReason(embedded.ip);
      if (inner) return { phrase: `the ${embedded.form} form of ${embedded.ip.toString()}, ${inner.phrase}`, kind: inner.kind };
      if (ownPort(embedded.ip)) return { phrase: `the ${embedded.form} form of a local address and port ${port} belongs to this service`, kind: 'own_port' };
    }
    return null;
  }
}

/** The refusal of an address the ceiling allows but the key's scope does not, or null. */
function scopeDenial(rule: ScopeRule | undefined, host: string, ip: ipaddr.IPv4 | ipaddr.IPv6): Denial | null {
  const embedded = embeddedIPv4(ip);
  if (!rule || rule.allows(host, ip, embedded.map((e) => e.ip))) return null;
  const outside = `outside the network scope ${scopeText(rule.scope)} of the key`;
  const carried = embedded.find((e) => !rule.allows(host, e.ip, []));
  return { phrase: carried ? `the ${carried.form} form of ${carried.ip.toString()}, ${outside}` : outside, kind: 'scope' };
}

/**
 * Names no lookup may be made for: `.invalid` (RFC 6761 6.4: resolvers answer no at once; an
 * `html` job's default address is one, HTML_PLACEHOLDER_URL) and `.onion` (RFC 7686: outside
 * Tor, refused without a DNS query, which would tell the network the name). `.test` and
 * `.example` are looked up as any name, as RFC 6761 asks of applications.
 */
const NEVER_RESOLVED = ['invalid', 'onion'];

function isNeverResolved(host: string): boolean {
  const last = host.slice(host.lastIndexOf('.') + 1);
  return NEVER_RESOLVED.includes(last);
}

/** Lower case, no brackets around IPv6, no trailing dots (the URL parser has done the rest). */
function canonicalHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = host.replace(/\.+$/, '');
  if (net.isIPv6(host)) host = ipaddr.IPv6.parse(host).toString();
  return host;
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // net.isIP is strict (dotted decimal only), so "0x7f.1" is not mistaken for an address here.
  if (!net.isIP(bare.replace(/%.*$/, ''))) return null;
  return ipaddr.parse(bare.replace(/%.*$/, ''));
}

/**
 * The IPv4 addresses an IPv6 address carries and the name of each form. Teredo carries two: the
 * client's, which the tunnel delivers to, and its relay server's; either one being denied denies
 * the address, since a host that routes Teredo reaches both.
 */
function embeddedIPv4(ip: ipaddr.IPv4 | ipaddr.IPv6): Array<{ ip: ipaddr.IPv4; form: string }> {
  if (ip.kind() !== 'ipv6') return [];
  const v6 = ip as ipaddr.IPv6;
  const p = v6.parts;
  const fromParts = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (v6.range()) {
    case 'ipv4Mapped':
      return [{ ip: v6.toIPv4Address(), form: 'IPv4-mapped' }];
    case 'rfc6145':
      return [{ ip: fromParts(p[6], p[7]), form: 'IPv4-translated' }];
    case 'rfc6052':
      return [{ ip: fromParts(p[6], p[7]), form: 'NAT64' }];
    case '6to4':
      return [{ ip: fromParts(p[1], p[2]), form: '6to4' }];
    case 'teredo':
      // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (RFC 4380): the server in bits 32-63, the client in
      // the last 32 bits inverted (so that NATs do not rewrite it).
      return [
        { ip: fromParts(p[6] ^ 0xffff, p[7] ^ 0xffff), form: 'Teredo client' },
        { ip: fromParts(p[2], p[3]), form: 'Teredo server' },
      ];
  }
  // ::a.b.c.d, the deprecated IPv4-compatible form (:: and ::1 are handled as themselves).
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) {
    return [{ ip: fromParts(p[6], p[7]), form: 'IPv4-compatible' }];
  }
  return [];
}

function isLocal(ip: ipaddr.IPv4 | ipaddr.IPv6, localAddresses: () => string[]): boolean {
  const range = ip.range();
  if (range === 'loopback' || range === 'unspecified') return true;
  const shown = ip.toString();
  return localAddresses().some((a) => {
    const local = parseAddress(a);
    return local !== null && local.toString() === shown;
  });
}

function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

function allowRange(text: string): IpRange {
  const range = parseRange(text);
  if (!range) throw new ValidationError(`egress allow range "${text}" is not an IP address or CIDR range`, 'egress_allow');
  return range;
}

function definedOnly(options: Partial<EgressPolicyOptions>): Partial<EgressPolicyOptions> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * The addresses of `host`, or a HostNotFoundError / HostLookupTimeoutError saying why there are
 * none. Resolver failures are told apart by their errno code; an error without one is not a
 * resolver's answer but a fault, and passes through as it is.
 */
async function lookup(resolve: Resolver, host: string, timeoutMs: number): Promise<EgressTarget[]> {
  let answers: EgressTarget[];
  try {
    answers = await withDeadline(resolve(host), timeoutMs, () => new HostLookupTimeoutError(host));
  } catch (err) {
    if (err instanceof HostLookupTimeoutError) throw err;
    const code = (err as NodeJS.ErrnoException)?.code;
    if (typeof code !== 'string') throw err;
    if (LOOKUP_TIMEOUT_CODES.has(code)) throw new HostLookupTimeoutError(host, { cause: err });
    throw new HostNotFoundError(host, { cause: err });
  }
  if (answers.length === 0) throw new HostNotFoundError(host);
  return answers;
}
