import { randomUUID } from 'node:crypto';
import { BrowserWindow, session, type Session, type WebContents } from 'electron';
import { CaptureError } from '../server/capture/engine.js';
import { withDeadline } from './deadline.js';

/** The header the egress proxy puts on the responses it refuses (see server/egress/proxy.ts). */
const DENIED_HEADER = 'x-egress-denied';
/** How Chromium reports a CONNECT the proxy refused. */
const TUNNEL_REFUSED = 'net::ERR_TUNNEL_CONNECTION_FAILED';
const CLEANUP_TIMEOUT_MS = 5_000;

export interface JobWindowOptions {
  /** Window content size in CSS pixels (the preset's viewport). */
  viewport: { width: number; height: number };
  userAgent: string;
  /** The egress guard's forward proxy; unset means direct connections (conformance runs only). */
  proxyServer?: string;
}

/** One capture's hidden window, alone in its own in-memory session. */
export interface JobWindow {
  readonly window: BrowserWindow;
  readonly contents: WebContents;
  readonly session: Session;
  /** Requests the egress proxy refused so far. */
  blockedRequests(): number;
  /** The proxy's reason when it refused the page itself (the top-level document). */
  pageDenial(): string | undefined;
  /** Requests sent and not yet answered, for the network-idle wait. */
  inFlight(): number;
  /**
   * Never resolves; rejects when the renderer crashes or hangs, the window goes away, or
   * `interrupt` is called. Race every step of the capture against it.
   */
  readonly interrupted: Promise<never>;
  /** Fails the capture with `err` (the caller's abort signal, the engine closing). */
  interrupt(err: Error): void;
  /**
   * Destroys the window and empties the session; never throws. `killRenderer` first ends a
   * renderer that may still be running the page (a script loop would outlive its window).
   */
  dispose(options?: { killRenderer?: boolean }): Promise<void>;
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
  // Preventing the event cancels the download.
  ses.on('will-download', (event) => event.preventDefault());

  let blocked = 0;
  let pageDenial: string | undefined;
  const pending = new Set<number>();
  ses.webRequest.onSendHeaders((details) => pending.add(details.id));
  ses.webRequest.onHeadersReceived((details, callback) => {
    const reason = headerValue(details.responseHeaders, DENIED_HEADER);
    if (reason !== undefined) {
      blocked++;
      if (details.resourceType === 'mainFrame') pageDenial = reason || 'the address is not allowed';
    }
    callback({});
  });
  ses.webRequest.onCompleted((details) => pending.delete(details.id));
  ses.webRequest.onErrorOccurred((details) => {
    pending.delete(details.id);
    if (details.error === TUNNEL_REFUSED) {
      blocked++;
      if (details.resourceType === 'mainFrame') pageDenial ??= 'the proxy refused the connection';
    }
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
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setAudioMuted(true);

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
  contents.on('render-process-gone', (_event, details) =>
    interrupt(new CaptureError(`The page's renderer process ended while capturing (${details.reason})`)),
  );
  contents.on('unresponsive', () => interrupt(new CaptureError('The page stopped responding')));
  window.on('closed', () => interrupt(new CaptureError('The capture window was closed')));

  // The debugger drives the full-page capture and touch emulation; attached before the first
  // navigation, it follows the page through every renderer swap.
  contents.debugger.attach('1.3');

  return {
    window,
    contents,
    session: ses,
    blockedRequests: () => blocked,
    pageDenial: () => pageDenial,
    inFlight: () => pending.size,
    interrupted,
    interrupt,
    async dispose({ killRenderer = false } = {}) {
      if (disposed) return;
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
      // Electron keeps in-memory sessions until the app quits; emptying them keeps a
      // long-running appliance from accumulating every job's cache and storage.
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
    },
  };
}

function headerValue(headers: Record<string, string[]> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, values] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return values.join(', ');
  }
  return undefined;
}
