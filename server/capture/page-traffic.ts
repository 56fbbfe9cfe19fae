import type { Frame, Page, Request, Response } from 'playwright-core';
import { egressDenial, egressUnreachable, isTunnelRefusal } from '../egress/proxy-markers.js';
import { egressBlocked, unreachableFailure } from './capture-failures.js';
import type { PageNetwork } from './quiet-network.js';
import { tunnelFailure } from './tunnel-failure.js';

/**
 * Once a page has started requests after `load`, the network counts as idle when none has been
 * in flight for this long, so requests that follow one another (a script that fetches data,
 * then the images it names) are waited for as one.
 */
const QUIET_MS = 50;
const POLL_MS = 20;

/**
 * Watches one page's requests: which are in flight (for a bounded network-idle wait) and which
 * the egress proxy refused, separating the main document from sub-requests; and counts the
 * documents the main frame commits, so a capture notices a page that navigated under it.
 */
export class PageTraffic implements PageNetwork {
  /** Sub-requests the egress proxy refused. */
  blockedRequests = 0;
  /** The proxy's reason when the document shown in the main frame was refused, else null. */
  mainDocumentDenied: string | null = null;
  /** The proxy's errno code and the address when it could not reach that document, else null. */
  mainDocumentUnreachable: { code: string; url: string } | null = null;
  /** The address of that document when the proxy refused its tunnel (denied or unreachable), else null. */
  mainDocumentTunnelRefused: string | null = null;
  /** Documents committed in the main frame so far; a change means the page navigated. */
  mainFrameNavigations = 0;
  private readonly inFlight = new Set<Request>();
  private readonly noted = new WeakSet<Response>();
  private started = 0;
  private navigationWaiters: Array<() => void> = [];
  private lastActivity = Date.now();
  private readonly detach: () => void;

  /** `proxyServer`: the egress proxy, asked why it refused a tunnel (tunnelFailure). */
  constructor(
    private readonly page: Page,
    private readonly proxyServer?: string,
  ) {
    const started = (request: Request) => {
      this.inFlight.add(request);
      this.started++;
      this.lastActivity = Date.now();
    };
    const finished = (request: Request) => {
      this.inFlight.delete(request);
      this.lastActivity = Date.now();
    };
    const failed = (request: Request) => {
      finished(request);
      if (!isTunnelRefusal(request.failure()?.errorText)) return;
      if (this.isMainDocument(request)) this.mainDocumentTunnelRefused = request.url();
      else this.blockedRequests++;
    };
    const responded = (response: Response) => this.noteResponse(response);
    page.on('request', started);
    page.on('requestfinished', finished);
    page.on('requestfailed', failed);
    const navigated = (frame: Frame) => {
      if (frame !== page.mainFrame()) return;
      this.mainFrameNavigations++;
      const waiters = this.navigationWaiters;
      this.navigationWaiters = [];
      for (const wake of waiters) wake();
    };
    page.on('response', responded);
    page.on('framenavigated', navigated);
    this.detach = () => {
      page.off('framenavigated', navigated);
      page.off('request', started);
      page.off('requestfinished', finished);
      page.off('requestfailed', failed);
      page.off('response', responded);
    };
  }

  /**
   * Resolves once no request has been in flight for `quietMs`, or after `maxMs` whatever
   * happens (pages that poll or stream never go idle, and that is no reason to fail). With
   * `quietMs` 0 it resolves as soon as nothing is in flight.
   */
  async networkIdle(maxMs: number, quietMs = QUIET_MS): Promise<void> {
    const deadline = Date.now() + maxMs;
    while (Date.now() < deadline) {
      if (this.inFlight.size === 0 && Date.now() - this.lastActivity >= quietMs) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * Reads the egress proxy's markers on a response. Called for every response the page gets,
   * and by the engine for the response its navigation ended with, in case that event has not
   * arrived yet. A response is read once: read again after a later one (a script moving the page
   * on at once), it would undo what that one said.
   */
  noteResponse(response: Response): void {
    if (this.noted.has(response)) return;
    this.noted.add(response);
    const reason = egressDenial(response.url(), response.headers());
    if (reason !== null) return this.refused(response.request(), reason);
    if (!this.isMainDocument(response.request())) return;
    // The document finally shown decides: a refused or failed hop that redirected on does not count.
    const code = egressUnreachable(response.url(), response.headers());
    if (code !== null) this.mainDocumentUnreachable = { code, url: response.url() };
    else if (!isRedirect(response.status())) {
      this.mainDocumentDenied = null;
      this.mainDocumentUnreachable = null;
      this.mainDocumentTunnelRefused = null;
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

  /** Requests the page has started so far; a change means the network was busy again. */
  requestsStarted(): number {
    return this.started;
  }

  /** Resolves when the main frame next commits a document (never, if it does not). */
  nextNavigation(): Promise<void> {
    return new Promise((resolve) => this.navigationWaiters.push(resolve));
  }

  dispose(): void {
    this.detach();
  }

  private refused(request: Request, reason: string): void {
    if (this.isMainDocument(request)) this.mainDocumentDenied = reason;
    else this.blockedRequests++;
  }

  private isMainDocument(request: Request): boolean {
    try {
      return request.isNavigationRequest() && request.frame() === this.page.mainFrame();
    } catch {
      // Worker requests have no frame.
      return false;
    }
  }
}

const isRedirect = (status: number) => status >= 300 && status < 400;
