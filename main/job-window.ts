import { randomUUID } from 'node:crypto';
import { BrowserWindow, session, type Session, type WebContents } from 'electron';
import { egressBlocked, pageCrashed, unreachableFailure } from '../server/capture/capture-failures.js';
import { CaptureError, PageCrashedError } from '../server/capture/engine.js';
import { tunnelFailure } from '../server/capture/tunnel-failure.js';
import type { PageNetwork } from '../server/capture/quiet-network.js';
import { withDeadline } from '../server/deadline.js';
import { egressDenial, egressUnreachable, TUNNEL_REFUSED_ERROR } from '../server/egress/proxy-markers.js';

/** A network with no request in flight for this long counts as idle. */
const QUIET_MS = 100;
const POLL_MS = 20;
const CLEANUP_TIMEOUT_MS = 5_000;

export interface JobWindowOptions {
  url: string;
  /** Window content size in CSS pixels (the preset's viewport). */
  viewport: { width: number; height: number };
  userAgent: string;
  /** The egress guard's forward proxy; unset means direct connections (conformance runs only). */
  proxyServer?: string;
}

/** One capture's hidden window, alone in its own in-memory session. */
export interface JobWindow extends PageNetwork {
  readonly window: BrowserWindow;
  readonly contents: WebContents;
  readonly session: Session;
  /** Sub-requests the egress proxy refused so far. */
  blockedRequests(): number;
  /**
   * Why the document shown in the main frame is not the page at `url`: the egress proxy refused
   * it or could not reach it (for a refused tunnel, the proxy is asked which). Null when it is
   * the page.
   */
  pageFailure(url: string): Promise<Error | null>;
  /** Whether the main frame's current document has fired DOMContentLoaded. */
  documentReady(): boolean;
  /** Whether the page tried to start a download (which is cancelled). */
  downloadStarted(): boolean;
  /**
   * Resolves once no request has been in flight for a moment, or after `maxMs` whatever
   * happens (pages that poll or stream never go idle, and that is no reason to fail).
   */
  networkIdle(maxMs: number): Promise<void>;
  /**
   * Never resolves; rejects when the renderer crashes or hangs, the window goes away, or
   * `interrupt` is called. Race every step of the capture against it.
   */
  readonly interrupted: Promise<never>;
  /** Fails the capture with `err` (the caller's abort signal, the engine closing). */
  interrupt(err: Error): void;
  /**
   * Destroys the window; never throws. `killRenderer` first ends a renderer that may still be
   * running the page (a script loop would outlive its window). The session is emptied after
   * that, in the background: the returned `emptied` settles when it is done (bounded).
   */
  dispose(options?: { killRenderer?: boolean }): { emptied: Promise<void> };
}

/**
 * Opens a hidden BrowserWindow for one capture in a fresh `job-<random>` partition, so
 * nothing (cookies, cache, storage, service workers) is shared with another job or the
 * control panel. Everything the page could use to reach further is shut: the session goes
 * through the egress proxy with loopback included, permission requests and checks are
 * refused, downloads are cancelled, `window.open` is denied, dialogs are suppressed, WebRTC
 * may not send UDP around the proxy.
 */
export async function openJobWindow(options: JobWindowOptions): Promise<JobWindow> {
  const partition = `job-${randomUUID()}`;
  // No `persist:` prefix: an in-memory session that never touches userData.
  const ses = session.fromPartition(partition);
  await ses.setProxy(
    options.proxyServer
      ? // `<-loopback>` removes Chromium's implicit bypass for localhost and 127.0.0.1, which
        // would otherwise be the easiest way past the guard.
        { mode: 'fixed_servers', proxyRules: options.proxyServer, proxyBypassRules: '<-loopback>' }
      : { mode: 'direct' },
  );
  ses.setUserAgent(options.userAgent);
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  let downloadStarted = false;
  ses.on('will-download', (event) => {
    // Preventing the event cancels the download.
    event.preventDefault();
    downloadStarted = true;
  });

  let blocked = 0;
  let pageDenial: string | null = null;
  let pageUnreachable: { code: string; url: string } | null = null;
  let pageTunnelRefused: string | null = null;
  const pending = new Set<number>();
  let started = 0;
  let lastActivity = Date.now();
  const settled = (id: number) => {
    pending.delete(id);
    lastActivity = Date.now();
  };
  ses.webRequest.onSendHeaders((details) => {
    pending.add(details.id);
    started++;
    lastActivity = Date.now();
  });
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = lowerCaseHeaders(details.responseHeaders);
    const reason = egressDenial(details.url, headers);
    if (details.resourceType === 'mainFrame') {
      // The document finally shown decides: a refused or failed hop that redirected on does not count.
      const code = egressUnreachable(details.url, headers);
      if (reason !== null) pageDenial = reason;
      else if (code !== null) pageUnreachable = { code, url: details.url };
      else if (details.statusCode < 300 || details.statusCode >= 400) {
        pageDenial = null;
        pageUnreachable = null;
        pageTunnelRefused = null;
      }
    } else if (reason !== null) {
      blocked++;
    }
    callback({});
  });
  ses.webRequest.onCompleted((details) => settled(details.id));
  ses.webRequest.onErrorOccurred((details) => {
    settled(details.id);
    if (details.error !== TUNNEL_REFUSED_ERROR) return;
    if (details.resourceType === 'mainFrame') pageTunnelRefused = details.url;
    else blocked++;
  });

  const { width, height } = options.viewport;
  const window = new BrowserWindow({
    show: false,
    frame: false,
    useContentSize: true,
    width,
    height,
    skipTaskbar: true,
    // macOS clamps windows to the screen otherwise; the other systems allow larger ones.
    enableLargerThanScreen: true,
    // Keep the hidden page rendering from the start so it lays out and paints like a visible one.
    paintWhenInitiallyHidden: true,
    webPreferences: {
      session: ses,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      // A hidden window is "in the background"; throttled timers and frames would stall
      // loading, animations and the captures themselves.
      backgroundThrottling: false,
      // alert()/confirm()/prompt() would block the page, and with it every later step.
      disableDialogs: true,
      spellcheck: false,
      navigateOnDragDrop: false,
      autoplayPolicy: 'document-user-activation-required',
    },
  });
  const contents = window.webContents;
  contents.setUserAgent(options.userAgent);
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.setWebRTCIPHandlingPolicy('disable_non_proxied_udp');
  contents.setAudioMuted(true);
  contents.on('will-attach-webview', (event) => event.preventDefault());

  let domReady = false;
  contents.on('did-start-navigation', (details) => {
    if (details.isMainFrame && !details.isSameDocument) domReady = false;
  });
  contents.on('dom-ready', () => {
    domReady = true;
  });

  let disposed = false;
  let reject!: (err: Error) => void;
  const interrupted = new Promise<never>((_, rej) => {
    reject = rej;
  });
  // Nobody may be racing against it at the moment it rejects; that must not be "unhandled".
  interrupted.catch(() => undefined);
  const interrupt = (err: Error) => {
    if (!disposed) reject(err);
  };
  // A renderer out of memory fails the page; one killed from outside or crashed is retried, as
  // in the Chromium engine (PageCrashedError).
  contents.on('render-process-gone', (_event, details) =>
    interrupt(details.reason === 'oom' ? pageCrashed(options.url) : new PageCrashedError(options.url)),
  );
  contents.on('unresponsive', () => interrupt(new CaptureError(`The page stopped responding while capturing ${options.url}`)));
  window.on('closed', () => interrupt(new CaptureError('The capture window was closed')));

  // The debugger drives the device emulation and the screenshots; attached before the first
  // navigation, it follows the page through every renderer swap.
  contents.debugger.attach('1.3');

  return {
    window,
    contents,
    session: ses,
    blockedRequests: () => blocked,
    async pageFailure(url) {
      if (pageDenial !== null) return egressBlocked(pageDenial);
      if (pageUnreachable) return unreachableFailure(url, pageUnreachable.url, pageUnreachable.code);
      return pageTunnelRefused === null ? null : tunnelFailure(options.proxyServer, url, pageTunnelRefused);
    },
    documentReady: () => domReady,
    downloadStarted: () => downloadStarted,
    async networkIdle(maxMs) {
      const deadline = Date.now() + maxMs;
      while (Date.now() < deadline && !disposed) {
        if (pending.size === 0 && Date.now() - lastActivity >= QUIET_MS) return;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    requestsStarted: () => started,
    interrupted,
    interrupt,
    dispose({ killRenderer = false } = {}) {
      if (disposed) return { emptied: Promise.resolve() };
      disposed = true;
      try {
        // The renderer serves this job's session only, so ending it touches nothing else.
        if (killRenderer && !contents.isDestroyed()) contents.forcefullyCrashRenderer();
      } catch {
        // already gone
      }
      try {
        if (!contents.isDestroyed() && contents.debugger.isAttached()) contents.debugger.detach();
      } catch {
        // detached with the page
      }
      try {
        if (!window.isDestroyed()) window.destroy();
      } catch {
        // already destroyed
      }
      ses.webRequest.onSendHeaders(null);
      ses.webRequest.onHeadersReceived(null);
      ses.webRequest.onCompleted(null);
      ses.webRequest.onErrorOccurred(null);
      return { emptied: emptySession(ses) };
    },
  };
}

/**
 * Electron keeps in-memory sessions until the app quits; emptying each one after its job keeps
 * a long-running appliance from accumulating every job's cache, storage and sockets.
 */
async function emptySession(ses: Session): Promise<void> {
  try {
    await withDeadline(ses.closeAllConnections(), CLEANUP_TIMEOUT_MS, () => new Error('closing connections timed out'));
  } catch {
    // best effort
  }
  try {
    await withDeadline(ses.clearData(), CLEANUP_TIMEOUT_MS, () => new Error('clearing the session timed out'));
  } catch {
    // best effort
  }
}

/** Electron gives header names as sent and values as lists; egressDenial wants lower-case names. */
function lowerCaseHeaders(headers: Record<string, string[]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(headers ?? {})) out[name.toLowerCase()] = values.join(', ');
  return out;
}
