import crypto from 'node:crypto';

import { egressDenial, egressUnreachable, isTunnelRefusal } from '../../egress/proxy-markers.js';
import { egressBlocked, unreachableFailure } from '../capture-failures.js';
import type { AwaitedNetwork } from '../outputs/capture-warnings.js';
import type { MainFrame } from './main-frame.js';
import { listen, type PageDriver } from './page-driver.js';
import type { PageNetwork } from './quiet-network.js';
import { tunnelFailure } from './tunnel-failure.js';

/**
 * Once a page has started requests after `load`, the network counts as idle when none has been
 * in flight for this long, so requests that follow one another (a script that fetches data,
 * then the images it names) are waited for as one.
 */
const QUIET_MS = 50;
const POLL_MS = 20;
/** How a request blocked by request-blocking.ts fails (Chromium adds `.Inspector` when the blocking is a session's). */
const BLOCKED_BY_CLIENT = 'net::ERR_BLOCKED_BY_CLIENT';
/** How a cross-origin fetch fails when its answer has no CORS headers (a proxy's refusal has none). */
const CORS_FAILED = 'net::ERR_FAILED';
/** Requests kept after they ended, for the raw-headers event that may come after the end. */
const SETTLED_KEPT = 512;

/** How long a capture waits, at its end, for the raw headers of sub-requests that failed without them. */
const LATE_HEADERS_MS = 1_000;

/**
 * A script's request (fetch, XHR) held open longer than this is a connection open by design — a
 * long poll — not one the picture waits for; an event stream is one from its start (WebSockets
 * are not requests here at all). Neither keeps the network busy.
 */
export const LONG_HELD_MS = 3_000;
/** The network is settled once no more than this many ordinary requests were in flight for SETTLE_QUIET_MS. */
const SETTLE_CROWD = 2;
const SETTLE_QUIET_MS = 500;
/** Request types a script makes for data: one in flight is data the page is waiting for, until it is held LONG_HELD_MS. */
const DATA_TYPES = new Set(['XHR', 'Fetch']);
/**
 * A script's data request that ended this recently has an answer the page may still be reading
 * (its JSON parsed, the promise chain that draws it not yet run): the network is not settled yet.
 */
const DATA_READ_MS = 200;

/**
 * A request in flight: where it goes now (after redirects), whether it is the main frame's
 * document, and whether its raw headers (responseReceivedExtraInfo) came.
 */
interface InFlight {
  url: string;
  mainDocument: boolean;
  rawHeaders: boolean;
  /** CDP's resource type (`Document`, `Image`, `XHR`, `Fetch`, `EventSource`…). */
  type: string | undefined;
  /** When it started (Date.now()). */
  startedAt: number;
  /** A script's data request: what makes it the same as another (pollKey). */
  key?: string;
  /** A data request the page was answered before: it polls, and the picture does not wait on it. */
  poll: boolean;
}

/**
 * Whether a request in flight is a connection open by design (an event stream, a long poll) or a
 * page's poll (a data request it was answered before), which never count as busy.
 */
function openByDesign(request: InFlight, now: number): boolean {
  return request.type === 'EventSource' || request.poll || (DATA_TYPES.has(request.type ?? '') && now - request.startedAt >= LONG_HELD_MS);
}

/** Most distinct data requests remembered as answered (a page asking for ever new ones stops being followed for polls). */
const ANSWERED_KEPT = 2_000;

/** The most of a request's address and of its body a poll key reads: the page makes both as long as it likes. */
const POLL_KEY_READ_CHARS = 4_096;

/**
 * What makes two data requests the same one asked again: the method, the address and the body
 * (their first POLL_KEY_READ_CHARS each), with runs of four digits or more (a time stamp, a cache
 * buster, a counter) taken as one; kept as a digest, so ANSWERED_KEPT of them stay small.
 */
function pollKey(method: string, url: string, body: string | undefined): string {
  const same = (text: string) => text.slice(0, POLL_KEY_READ_CHARS).replace(/\d{4,}(\.\d+)?/g, '#');
  return crypto.createHash('sha256').update(`${method.slice(0, 16)} ${same(url)} ${same(body ?? '')}`).digest('base64');
}

/**
 * Watches one page's requests through CDP's Network events: which are in flight (for a bounded
 * network-idle wait) and which the egress proxy refused, separating the main frame's document
 * from sub-requests. The page must be enabled (`Network.enable`) for the events to come.
 */
export class PageTraffic implements PageNetwork, AwaitedNetwork {
  /** Sub-requests the egress proxy refused. */
  blockedRequests = 0;
  /** The proxy's reason when the document shown in the main frame was refused, else null. */
  mainDocumentDenied: string | null = null;
  /** The proxy's errno code and the address when it could not reach that document, else null. */
  mainDocumentUnreachable: { code: string; url: string } | null = null;
  /** The HTTP status of the document shown in the main frame, once its response came. */
  mainDocumentStatus: number | null = null;
  /** The address of that document when the proxy refused its tunnel (denied or unreachable), else null. */
  mainDocumentTunnelRefused: string | null = null;
  /** Addresses of sub-requests the capture's own blocking failed (block_ads, block_trackers: net::ERR_BLOCKED_BY_CLIENT). */
  readonly blockedByCapture = new Set<string>();
  private readonly inFlight = new Map<string, InFlight>();
  /** The requests that ended last (oldest first), up to SETTLED_KEPT. */
  private readonly settled = new Map<string, InFlight>();
  /** Sub-requests counted in blockedRequests, which a refusal may report twice (see the events). */
  private readonly refused = new Set<string>();
  /** Raw headers that came before their request was announced (oldest first), up to SETTLED_KEPT. */
  private readonly earlyHeaders = new Map<string, Record<string, string>>();
  /** Sub-requests that failed as a refused cross-origin fetch does, before their raw headers came. */
  private readonly awaitingHeaders = new Set<string>();
  private started = 0;
  private lastActivity = Date.now();
  /** Set by markSettleStart: only then is a crowd of requests in flight noted. */
  private settling = false;
  /** When a script's data request last ended, of those that are not polls (0: none has). */
  private lastDataEnded = 0;
  /** The data requests answered so far (pollKey): one asked again is a poll. */
  private readonly answered = new Set<string>();
  /** When more than SETTLE_CROWD ordinary requests were last in flight, since the mark (markSettleStart); 0 if never. */
  private lastCrowded = 0;
  private readonly detach: () => void;

  /** `proxyServer`: the egress proxy, asked why it refused a tunnel (tunnelFailure). */
  constructor(
    driver: PageDriver,
    private readonly frame: MainFrame,
    private readonly proxyServer?: string,
  ) {
    this.detach = listen(driver, {
      'Network.requestWillBeSent': ({ requestId, frameId, type, documentURL, initiator, request }) => {
        if (isWorkerScript(type, documentURL, request.url) || isTabIcon(type, initiator)) return;
        // A redirect is sent again under the same id; it counts as a request, as the page made it.
        const mainDocument = type === 'Document' && frameId !== undefined && frameId === this.frame.id;
        const now = Date.now();
        const key = DATA_TYPES.has(type ?? '') ? pollKey(request.method ?? 'GET', request.url, request.postData) : undefined;
        const poll = key !== undefined && this.answered.has(key);
        const entry = { url: request.url, mainDocument, rawHeaders: false, type, startedAt: this.inFlight.get(requestId)?.startedAt ?? now, key, poll };
        this.inFlight.set(requestId, entry);
        this.started++;
        this.lastActivity = now;
        if (this.settling && this.ordinaryCount(now) > SETTLE_CROWD) this.lastCrowded = now;
        const early = this.earlyHeaders.get(requestId);
        if (early) {
          this.earlyHeaders.delete(requestId);
          this.noteRawHeaders(requestId, entry, early);
        }
      },
      'Network.responseReceived': ({ requestId, response }) => {
        const request = this.inFlight.get(requestId);
        if (request) this.noteResponse(requestId, request, response);
      },
      // A cross-origin fetch the proxy refused: the refusal has no CORS headers, so the page is
      // told only "failed" and CDP sends no responseReceived; the raw headers still carry the marker.
      // The network service sends it, the renderer the other events: it may come before the
      // request is announced, or after its end (then the capture waits for it: lateRefusals).
      'Network.responseReceivedExtraInfo': ({ requestId, headers }) => {
        const request = this.inFlight.get(requestId) ?? this.settled.get(requestId);
        if (request) this.noteRawHeaders(requestId, request, headers);
        else keepBounded(this.earlyHeaders, requestId, headers);
      },
      'Network.loadingFinished': ({ requestId }) => void this.settle(requestId),
      'Network.loadingFailed': ({ requestId, errorText }) => {
        const request = this.settle(requestId);
        if (request && errorText.startsWith(BLOCKED_BY_CLIENT)) this.blockedByCapture.add(request.url);
        if (request && errorText === CORS_FAILED && !request.mainDocument && !request.rawHeaders) this.awaitingHeaders.add(requestId);
        if (!request || !isTunnelRefusal(errorText)) return;
        if (request.mainDocument) this.mainDocumentTunnelRefused = request.url;
        else this.noteBlocked(requestId);
      },
    });
  }

  /**
   * Resolves with true once no request has been in flight for `quietMs`, or with false after
   * `maxMs` whatever happens (pages that poll or stream never go idle, and that is no reason to
   * fail). With `quietMs` 0 it resolves as soon as nothing is in flight.
   */
  async networkIdle(maxMs: number, quietMs = QUIET_MS): Promise<boolean> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      if (this.ordinaryCount(Date.now()) === 0 && Date.now() - this.lastActivity >= quietMs) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * Why the document shown in the main frame is not the page at `url` (whose capture this is):
   * the egress proxy refused it or could not reach it (for a refused tunnel, the proxy is asked
   * which). Null when it is the page.
   */
  async mainDocumentFailure(url: string): Promise<Error | null> {
    if (this.mainDocumentDenied !== null) return egressBlocked(this.mainDocumentDenied);
    const unreachable = this.mainDocumentUnreachable;
    if (unreachable) return unreachableFailure(url, unreachable.url, unreachable.code);
    const tunnel = this.mainDocumentTunnelRefused;
    return tunnel === null ? null : tunnelFailure(this.proxyServer, url, tunnel);
  }

  /**
   * Waits, up to `maxMs`, for the raw headers of the sub-requests that failed as a refused
   * cross-origin fetch does before they came, so that blockedRequests counts every refusal the
   * page saw. Returns at once when there is none (nearly every capture).
   */
  async lateRefusals(maxMs = LATE_HEADERS_MS): Promise<void> {
    await pollUntil(() => this.awaitingHeaders.size === 0, maxMs);
  }

  /**
   * The addresses of the requests in flight now that keep the network busy (capture-warnings.ts:
   * network_busy): not the connections open by design. Of a page whose picture settled, not its
   * scripts' data requests either (a drawn dashboard polling every second is not busy).
   */
  inFlightUrls(settled = false): string[] {
    return this.ordinaryInFlight(Date.now())
      .filter((request) => !(settled && DATA_TYPES.has(request.type ?? '')))
      .map((request) => request.url);
  }

  /** Requests in flight the page still waits on, however long held: all but event streams (the blank check's retake). */
  awaited(): number {
    let count = 0;
    for (const request of this.inFlight.values()) if (request.type !== 'EventSource') count++;
    return count;
  }

  /** Resolves once awaited() is 0, or after `maxMs`. */
  async untilNoneAwaited(maxMs: number): Promise<void> {
    await pollUntil(() => this.awaited() === 0, maxMs);
  }

  /** Starts watching for the network to settle: what was in flight before counts no more as a crowd (the page's `load`). */
  markSettleStart(): void {
    this.settling = true;
    this.lastCrowded = 0;
  }

  /**
   * Whether the page's network has settled (wait_until: settled): no more than two ordinary
   * requests in flight for 500 ms since markSettleStart, none of them a script's request for
   * data younger than LONG_HELD_MS, and none such ended within DATA_READ_MS. Returns the
   * ordinary requests in flight when it has not.
   */
  networkSettled(): { settled: boolean; busy: string[] } {
    const now = Date.now();
    const ordinary = this.ordinaryInFlight(now);
    if (ordinary.length > SETTLE_CROWD) this.lastCrowded = now;
    const quiet = this.lastCrowded === 0 || now - this.lastCrowded >= SETTLE_QUIET_MS;
    const read = now - this.lastDataEnded >= DATA_READ_MS;
    const settled = quiet && read && !ordinary.some((request) => DATA_TYPES.has(request.type ?? ''));
    return { settled, busy: settled ? [] : ordinary.map((request) => request.url) };
  }

  /** Requests the page has started so far; a change means the network was busy again. */
  requestsStarted(): number {
    return this.started;
  }

  dispose(): void {
    this.detach();
  }

  /** The requests in flight that are not connections open by design. */
  private ordinaryInFlight(now: number): InFlight[] {
    return [...this.inFlight.values()].filter((request) => !openByDesign(request, now));
  }

  /** How many requests in flight are not connections open by design (no list made: it runs at every request). */
  private ordinaryCount(now: number): number {
    let count = 0;
    for (const request of this.inFlight.values()) if (!openByDesign(request, now)) count++;
    return count;
  }

  /** Reads the egress proxy's markers on a response (a redirect's comes with the next hop's request, unread). */
  private noteResponse(requestId: string, request: InFlight, response: { url: string; status: number; headers: Record<string, string> }): void {
    const headers = lowerCaseNames(response.headers);
    const reason = egressDenial(response.url, headers);
    if (reason !== null) {
      if (request.mainDocument) this.mainDocumentDenied = reason;
      else this.noteBlocked(requestId);
      return;
    }
    if (!request.mainDocument) return;
    this.mainDocumentStatus = response.status;
    // The document finally shown decides: an earlier one that failed, then moved on, does not count.
    const code = egressUnreachable(response.url, headers);
    if (code !== null) this.mainDocumentUnreachable = { code, url: response.url };
    else {
      this.mainDocumentDenied = null;
      this.mainDocumentUnreachable = null;
      this.mainDocumentTunnelRefused = null;
    }
  }

  /** Reads the egress proxy's denial marker on a sub-request's raw headers. */
  private noteRawHeaders(requestId: string, request: InFlight, headers: Record<string, string>): void {
    request.rawHeaders = true;
    this.awaitingHeaders.delete(requestId);
    if (!request.mainDocument && egressDenial(request.url, lowerCaseNames(headers)) !== null) this.noteBlocked(requestId);
  }

  private noteBlocked(requestId: string): void {
    if (this.refused.has(requestId)) return;
    this.refused.add(requestId);
    this.blockedRequests++;
  }

  private settle(requestId: string): InFlight | undefined {
    const request = this.inFlight.get(requestId);
    this.inFlight.delete(requestId);
    if (request) keepBounded(this.settled, requestId, request);
    this.lastActivity = Date.now();
    if (request?.key !== undefined && !request.poll) {
      this.lastDataEnded = this.lastActivity;
      if (this.answered.size < ANSWERED_KEPT) this.answered.add(request.key);
    }
    return request;
  }
}

/**
 * Whether a request is a Web Worker's own script (MkDocs' search worker, say): a request made
 * for a document at its own address that is not a document. Chromium reports it to the page's
 * session as it starts, but its response and its end only to the worker's own target, as every
 * request the worker makes (importScripts, fetch), which the page's session never sees. Counted,
 * it stayed in flight for good: `networkidle` waited its whole time-out (30 s) on every page
 * with a worker, and `load` 1.5 s more for the requests in flight, and as much again before the
 * picture was taken again. Nothing the worker loads is drawn by itself; what it sends the page
 * is, and the requests the page then makes are followed.
 */
function isWorkerScript(type: string | undefined, documentURL: string | undefined, url: string): boolean {
  return type !== 'Document' && documentURL === url;
}

/**
 * Whether a request is the browser's own for the tab's icon (the page's `<link rel="icon">`, or
 * /favicon.ico): of no kind the page loads (`Other`) and started by no part of it (`other`). It
 * starts after `load` and is never drawn in the page: counted, it made every capture take its
 * picture twice (takeOnceQuiet), 0.4–0.7 s more on a mobile capture of a documentation page.
 */
function isTabIcon(type: string | undefined, initiator: { type: string } | undefined): boolean {
  return type === 'Other' && initiator?.type === 'other';
}

/** Resolves once `done()` holds, checked every POLL_MS, or after `maxMs`. */
async function pollUntil(done: () => boolean, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

/** Adds an entry to a map kept to the last SETTLED_KEPT entries. */
function keepBounded<T>(map: Map<string, T>, key: string, value: T): void {
  map.set(key, value);
  if (map.size > SETTLED_KEPT) map.delete(map.keys().next().value!);
}

/** CDP gives header names as the server sent them; the markers are looked up in lower case. */
function lowerCaseNames(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}
