import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// The ad and tracker lists block_ads and block_trackers use: Ghostery's tracker database
// (@ghostery/trackerdb, shipped in node_modules, never downloaded at run time), read once per
// process on first use and turned into host and path rules (and Chromium's blocked-URL patterns).

/** What a list entry is blocked as. */
export type BlockKind = 'ads' | 'trackers';

/**
 * Ghostery's categories, by what they are blocked as:
 * - ads: `advertising` (ad servers, exchanges, retargeting) and `pornvertising` (adult ad networks);
 * - trackers: `site_analytics` (analytics, session recording), `social_media` (social pixels,
 *   share buttons and widgets, as the tracking-protection lists of browsers count them) and
 *   `misc` (unclassified trackers).
 * Never blocked: `consent` (block_cookie_banners deals with those), `customer_interaction`
 * (chat and support widgets), `audio_video_player`, `hosting` (CDNs), `utilities` (tag managers,
 * privacy notices) and `extensions`: pages break or lose visible content without them.
 */
const KIND_OF_CATEGORY: Readonly<Record<string, BlockKind>> = {
  advertising: 'ads',
  pornvertising: 'ads',
  site_analytics: 'trackers',
  social_media: 'trackers',
  misc: 'trackers',
};

/** One network filter of the lists. */
export interface BlockRule {
  /** The site (registrable domain, siteOf) of the filter's host: a page on that site is first-party to it. */
  site: string;
  host: string;
  /** A prefix of the URL's path, `*` for any characters; '' for the whole host. */
  path: string;
  /** In URLPattern syntax (Network.setBlockedURLs `urlPatterns`), anchored: any scheme, the host and its subdomains, any port. */
  urlPattern: string;
}

type Lists = Record<BlockKind, BlockRule[]>;

let lists: Lists | undefined;

/**
 * The rules that block `kinds`; for a page at `pageUrl`, without those whose host is on the
 * page's own site (first-party requests are never blocked). The lists are about 3,500 rules.
 */
export function blockRules(kinds: readonly BlockKind[], pageUrl?: string): BlockRule[] {
  const all = loadLists();
  let pageSite: string | null = null;
  try {
    if (pageUrl !== undefined) pageSite = siteOf(new URL(pageUrl).hostname);
  } catch {
    // Not an address: no site to spare.
  }
  return kinds.flatMap((kind) => (pageSite === null ? all[kind] : all[kind].filter((rule) => rule.site !== pageSite)));
}

/**
 * A rule for Chromium before `urlPatterns` (Network.setBlockedURLs `urls`), where the pieces
 * between `*` must occur in that order anywhere in the URL: the host after `://` or a dot,
 * followed by the path, with or without a port. Less exact (a query string naming the host
 * also matches), so only the fallback.
 */
export function wildcardsFor({ host, path: urlPath }: BlockRule): string[] {
  const piece = urlPath || '/';
  return [`://${host}${piece}`, `://${host}:*${piece}`, `.${host}${piece}`, `.${host}:*${piece}`];
}

/** The lists, read and converted on first use (about 250 ms), then kept for the process's life. */
function loadLists(): Lists {
  if (lists) return lists;
  const require = createRequire(import.meta.url);
  // The package exports only its code; the JSON export sits next to it in dist/.
  const file = path.join(path.dirname(require.resolve('@ghostery/trackerdb')), '..', 'trackerdb.json');
  const db = JSON.parse(fs.readFileSync(file, 'utf8')) as { patterns: Record<string, { category: string; filters?: string[] }> };
  const loaded: Lists = { ads: [], trackers: [] };
  const seen = new Set<string>();
  for (const pattern of Object.values(db.patterns)) {
    const kind = KIND_OF_CATEGORY[pattern.category];
    if (!kind) continue;
    for (const filter of pattern.filters ?? []) {
      const rule = ruleFor(filter);
      if (!rule || seen.has(`${kind} ${rule.urlPattern}`)) continue;
      seen.add(`${kind} ${rule.urlPattern}`);
      loaded[kind].push(rule);
    }
  }
  lists = { ads: withoutCovered(loaded.ads), trackers: withoutCovered(loaded.trackers) };
  return lists;
}

/** Drops the rules another rule of the list already covers: those on a host (or under a host) the list blocks whole. */
function withoutCovered(rules: BlockRule[]): BlockRule[] {
  const wholeHosts = new Set(rules.filter((rule) => rule.path === '').map((rule) => rule.host));
  return rules.filter((rule) => {
    const labels = rule.host.split('.');
    for (let i = rule.path === '' ? 1 : 0; i < labels.length - 1; i++) {
      if (wholeHosts.has(labels.slice(i).join('.'))) return false;
    }
    return true;
  });
}

/**
 * `||host^`, `||host/path` (with `*` wildcards), optionally with `$3p` / `$third-party` or a
 * resource type: the filters whose meaning a host and a path prefix carry (3,620 of the 3,776
 * in the blocked categories). Left out: filters with a `domain=` or `1p` option, a host
 * with a wildcard, a query string, regular expressions, bare path fragments and cosmetic rules.
 */
const NETWORK_FILTER = /^\|\|([a-z0-9.-]+\.[a-z0-9-]+)(\/[^$^|?#\s]*)?\^?(?:\$(.*)|3p)?$/i;
const ALLOWED_OPTIONS = /^(3p|third-party|script|image|xhr|stylesheet|subdocument)$/;

function ruleFor(filter: string): BlockRule | null {
  const match = NETWORK_FILTER.exec(filter);
  if (!match) return null;
  const host = match[1]!.toLowerCase();
  const rawPath = match[2] ?? '';
  const options = (match[3] ?? '').split(/[$,]/).filter(Boolean);
  if (!options.every((option) => ALLOWED_OPTIONS.test(option))) return null;
  // A filter's path is a prefix of the URL's path (and query): `/collect` also blocks `/collect?v=1`.
  const urlPath = rawPath ? `${escapePattern(rawPath).replace(/\\\*/g, '*')}*` : '/*';
  return { site: siteOf(host), host, path: rawPath, urlPattern: `*://{*.}?${escapePattern(host)}:*${urlPath}` };
}

/** URLPattern's special characters in a literal. */
function escapePattern(text: string): string {
  return text.replace(/[\\(){}*:+?]/g, '\\$&');
}

/**
 * Second-level labels under which a country's domains are registered (example.co.uk): the few
 * that cover most of the web, in place of the whole Public Suffix List. A host under another
 * public suffix counts as one site with more of its neighbours than it should, so it is blocked
 * less, never more.
 */
const SECOND_LEVEL = new Set(['ac', 'co', 'com', 'edu', 'go', 'gob', 'gov', 'gv', 'ltd', 'mil', 'ne', 'net', 'nic', 'nom', 'or', 'org', 'plc', 'sch']);

/** The registrable domain of `host` (www.example.co.uk → example.co.uk); an IP address is its own site. */
export function siteOf(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (/^[\d.]+$/.test(name) || name.includes(':') || name.startsWith('[')) return name;
  const labels = name.split('.');
  if (labels.length <= 2) return name;
  const keep = labels[labels.length - 1]!.length === 2 && SECOND_LEVEL.has(labels[labels.length - 2]!) ? 3 : 2;
  return labels.slice(-keep).join('.');
}
