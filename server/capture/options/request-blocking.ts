import type { CaptureOptions } from '../capture-options.js';
import type { PageDriver } from '../pipeline/page-driver.js';
import { type BlockKind, type BlockRule, blockRules, siteOf, wildcardsFor } from './blocking-lists.js';

// How: every request of the page is paused (Fetch) and failed when its host is on a list and
// not on the site of the page's own document, else continued. Measured on a page of 50
// sub-requests (40 first-party, 10 third-party, 5 of them listed) on loopback, on a busy 2-core
// machine, medians of 10 to 20 loads: Fetch took 5 ms to set up and added 40 to 270 ms to the
// load (610 to 770 ms without blocking); Chromium's own Network.setBlockedURLs took 470 to
// 690 ms to set up with the lists' 14,000 wildcard patterns and added 420 to 520 ms to the load
// (in its URLPattern form: 380 ms, and 830 ms), as Chromium tests every request against every
// pattern. Fetch is also exact where the patterns cannot be: first-party is decided against
// the document actually shown (after redirects), and frame documents can be blocked while the
// main frame's never is.

/**
 * Blocks the page's requests to ad servers (`blockAds`) and trackers (`blockTrackers`) before it
 * is navigated to `pageUrl`. Does nothing when neither is asked for.
 *
 * Only third-party requests are blocked: a request on the site (registrable domain) of the main
 * frame's document is always let through, and so is every main-frame navigation. A blocked
 * request fails as an ad blocker's does (net::ERR_BLOCKED_BY_CLIENT). Requests made inside a
 * cross-site frame run in another renderer, which this page's session does not see: they are
 * not filtered, but the frame itself is blocked when its address is listed.
 */
export async function blockRequests(driver: PageDriver, pageUrl: string, options: CaptureOptions): Promise<void> {
  const kinds: BlockKind[] = [];
  if (options.blockAds) kinds.push('ads');
  if (options.blockTrackers) kinds.push('trackers');
  if (!kinds.length) return;
  // The headers and HTTP credentials of option-steps.ts pause the page's requests with Fetch too;
  // one session has one set of Fetch patterns, so with them the blocking goes to Chromium's list.
  if (options.headers || options.httpAuth) return blockWithPatterns(driver, blockRules(kinds, pageUrl));
  return blockWithFetch(driver, pageUrl, blockRules(kinds));
}

async function blockWithFetch(driver: PageDriver, pageUrl: string, rules: BlockRule[]): Promise<void> {
  const matcher = new HostMatcher(rules);
  const { frameTree } = await driver.send('Page.getFrameTree', {});
  const mainFrameId = frameTree.frame.id;
  let pageSite = siteOfUrl(pageUrl);
  driver.on('Fetch.requestPaused', ({ requestId, request, resourceType, frameId }) => {
    let block = false;
    if (resourceType === 'Document' && frameId === mainFrameId) pageSite = siteOfUrl(request.url);
    else block = matcher.matches(request.url, pageSite);
    const answer = block
      ? driver.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' })
      : driver.send('Fetch.continueRequest', { requestId });
    // A request the page cancelled meanwhile, or a page gone, answers an error: nothing to do.
    answer.catch(() => undefined);
  });
  await driver.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
}

/** Chromium's own blocked-URL list: applied to sub-requests only, so the page's document is never blocked. */
async function blockWithPatterns(driver: PageDriver, rules: BlockRule[]): Promise<void> {
  try {
    await driver.send('Network.setBlockedURLs', { urlPatterns: rules.map(({ urlPattern }) => ({ urlPattern, block: true })) });
  } catch {
    // Chromium before `urlPatterns` (about 138) takes only wildcards.
    await driver.send('Network.setBlockedURLs', { urls: rules.flatMap(wildcardsFor) });
  }
}

/** The rules by host, so a request costs one lookup per label of its host. */
class HostMatcher {
  private readonly byHost = new Map<string, BlockRule[]>();

  constructor(rules: BlockRule[]) {
    for (const rule of rules) {
      const list = this.byHost.get(rule.host);
      if (list) list.push(rule);
      else this.byHost.set(rule.host, [rule]);
    }
  }

  /** Whether `url` is on a listed host (or under one) of another site than `pageSite`, and its path matches. */
  matches(url: string, pageSite: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') return false;
    const host = parsed.hostname.toLowerCase();
    if (siteOf(host) === pageSite) return false;
    const pathAndQuery = parsed.pathname + parsed.search;
    const labels = host.split('.');
    for (let i = 0; i < labels.length - 1; i++) {
      const rules = this.byHost.get(labels.slice(i).join('.'));
      if (rules?.some((rule) => rule.path === '' || pathMatches(rule.path, pathAndQuery))) return true;
    }
    return false;
  }
}

/** A filter's path is a prefix of the URL's path and query, with `*` standing for any characters. */
function pathMatches(pattern: string, pathAndQuery: string): boolean {
  if (!pattern.includes('*')) return pathAndQuery.startsWith(pattern);
  const pieces = pattern.split('*');
  if (!pathAndQuery.startsWith(pieces[0]!)) return false;
  let at = pieces[0]!.length;
  for (const piece of pieces.slice(1)) {
    const found = pathAndQuery.indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

function siteOfUrl(url: string): string {
  try {
    return siteOf(new URL(url).hostname);
  } catch {
    return '';
  }
}
