import { randomUUID } from 'node:crypto';

import { BrowserWindow, type Certificate, type Session, session, type WebContents } from 'electron';

import { pageCrashed } from '../server/capture/capture-failures.js';
import { CaptureError, PageCrashedError } from '../server/capture/engine.js';
import type { PageDriver } from '../server/capture/pipeline/page-driver.js';
import type { Tripwire } from '../server/capture/pipeline/tripwire.js';
import { withDeadline } from '../server/deadline.js';
import { type ChainChecker, MAX_CHAIN } from '../server/egress/trusted-authorities.js';
import { debuggerDriver } from './debugger-driver.js';

const CLEANUP_TIMEOUT_MS = 5_000;

export interface JobWindowOptions {
  url: string;
  /** Window content size in CSS pixels (the preset's viewport). */
  viewport: { width: number; height: number };
  userAgent: string;
  /** The egress guard's forward proxy; unset means direct connections (conformance runs only). */
  proxyServer?: string;
  /** The --ca-file authorities' check of a chain Chromium's own roots refused; unset: Chromium decides alone. */
  trusts?: ChainChecker;
}

/** One capture's hidden window, alone in its own in-memory session. */
export interface JobWindow {
  readonly window: BrowserWindow;
  readonly contents: WebContents;
  readonly session: Session;
  /** The window's debugger, attached, for the capture pipeline. */
  readonly driver: PageDriver;
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
 * may not send UDP around the proxy. A renderer that crashes or hangs, or the window closing,
 * trips `tripwire`, which every step of the capture races against.
 */
export async function openJobWindow(options: JobWindowOptions, tripwire: Tripwire): Promise<JobWindow> {
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
  if (options.trusts) trustAuthorities(ses, options.trusts);
  ses.setUserAgent(options.userAgent);
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  ses.on('will-download', (event) => {
    // Preventing the event cancels the download; the pipeline sees it start (Page.downloadWillBegin).
    event.preventDefault();
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

  let disposed = false;
  const interrupt = (err: Error) => {
    if (!disposed) tripwire.trip(err);
  };
  // A renderer out of memory fails the page; one killed from outside or crashed is retried, as
  // in the Chromium engine (PageCrashedError).
  contents.on('render-process-gone', (_event, details) =>
    interrupt(details.reason === 'oom' ? pageCrashed(options.url) : new PageCrashedError(options.url)),
  );
  contents.on('unresponsive', () => interrupt(new CaptureError(`The page stopped responding while capturing ${options.url}`)));
  window.on('closed', () => interrupt(new CaptureError('The capture window was closed')));

  // The debugger is the capture pipeline's driver (and emulates the device); attached before the
  // first navigation, it follows the page through every renderer swap.
  contents.debugger.attach('1.3');

  return {
    window,
    contents,
    session: ses,
    driver: debuggerDriver(contents.debugger),
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

/** Chromium's net error for a chain that leads to no root it trusts (net/base/net_error_list.h). */
const ERR_CERT_AUTHORITY_INVALID = -202;
/** setCertificateVerifyProc's answers: trusted, or Chromium's own verdict. */
const VERIFIED = 0;
const CHROMIUM_DECIDES = -3;

/**
 * Lets the session trust the --ca-file authorities besides Chromium's: on Linux the headless
 * engine is given them in an NSS database of its own, which the app cannot do without touching
 * the user's. Only a chain Chromium refused for its authority alone is looked at again, and it is
 * accepted when it names the host and leads to one of them (chainChecker); any other error (a
 * wrong name, an expired or revoked certificate) keeps Chromium's verdict, and the job fails
 * naming the host and the error as in the headless engine.
 */
function trustAuthorities(ses: Session, trusts: ChainChecker): void {
  ses.setCertificateVerifyProc((request, callback) => {
    if (request.errorCode !== ERR_CERT_AUTHORITY_INVALID) return callback(CHROMIUM_DECIDES);
    const chain: string[] = [];
    for (let cert: Certificate | undefined = request.certificate; cert && chain.length < MAX_CHAIN; cert = cert.issuerCert) {
      chain.push(cert.data);
      if (cert.issuerCert === cert) break;
    }
    callback(trusts(chain, request.hostname) ? VERIFIED : CHROMIUM_DECIDES);
  });
}
