import { once } from 'node:events';
import { app } from 'electron';
import {
  captureTimedOut,
  egressBlocked,
  loadFailed,
  loadTimedOut,
  networkFailure,
} from '../server/capture/capture-failures.js';
import {
  CaptureError,
  type CaptureEngine,
  type CaptureRequest,
  type CaptureResult,
} from '../server/capture/engine.js';
import { DEFAULT_QUALITY } from '../server/capture/image-encoder.js';
import { NETWORK_IDLE_MAX_MS, scrollTimeLimitMs, takeOnceQuiet } from '../server/capture/quiet-network.js';
import { userAgentFor } from '../server/capture/presets.js';
import { withDeadline } from '../server/deadline.js';
import { TUNNEL_REFUSED_REASON } from '../server/egress/proxy-markers.js';
import { emulateDevice } from './device-emulation.js';
import { openJobWindow, type JobWindow } from './job-window.js';
import { captureFullPage, captureViewport, readPageSource, scrollThroughPage, type Shot } from './page-capture.js';

export interface ElectronEngineOptions {
  /**
   * The egress guard's forward proxy ("http://127.0.0.1:PORT"). Every job session sends all
   * its traffic, loopback included, through it. @default none: direct connections, which only
   * the conformance runner uses
   */
  proxyServer?: string;
}

/**
 * Captures with hidden BrowserWindows in the Electron main process: one window per job, each
 * in its own in-memory session partition behind the egress guard (see job-window.ts). The
 * viewport comes from `capturePage`, full pages from the debugger's `captureBeyondViewport`.
 * Failures read as the Chromium engine's (server/capture/capture-failures.ts); a crashed or
 * hung renderer fails its job only, since the "browser" here is the app itself.
 *
 * The host app must keep running when the last window closes (listen to
 * `window-all-closed`), or it quits after the first capture.
 */
export class ElectronEngine implements CaptureEngine {
  readonly name = 'electron';
  private started = false;
  private readonly active = new Set<JobWindow>();
  /** Sessions of finished jobs still being emptied; close() waits for them. */
  private readonly emptying = new Set<Promise<void>>();

  constructor(private readonly options: ElectronEngineOptions = {}) {}

  async start(): Promise<void> {
    await app.whenReady();
    this.started = true;
  }

  isReady(): boolean {
    return this.started;
  }

  chromiumVersion(): string {
    return process.versions.chrome;
  }

  async close(): Promise<void> {
    this.started = false;
    const jobs = [...this.active];
    for (const job of jobs) job.interrupt(new CaptureError('The capture engine was closed'));
    for (const job of jobs) this.track(job.dispose({ killRenderer: true }).emptied);
    await Promise.all([...this.emptying]);
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    if (!this.started) throw new CaptureError('The Electron capture engine is not started');
    const { url, preset, signal } = request;
    signal?.throwIfAborted();
    const viewport = request.viewport ?? { width: preset.width, height: preset.height };
    const userAgent = userAgentFor(preset, request.googlebot, this.chromiumVersion());
    const job = await openJobWindow({ url, viewport, userAgent, proxyServer: this.options.proxyServer });
    this.active.add(job);
    const onAbort = () => job.interrupt(signal?.reason ?? new Error('The capture was aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    let finished = false;
    try {
      // Every step also loses to a crash, a hang, the caller's abort or the engine closing.
      const step = <T>(work: Promise<T>) => Promise.race([work, job.interrupted]);
      // The debugger can set up only a live renderer; about:blank starts one without any traffic.
      await step(job.contents.loadURL('about:blank'));
      await step(emulateDevice(job.contents, preset, viewport));
      await step(this.load(job, request, userAgent));
      report(request, 40);

      const { captureTimeoutMs } = request;
      const { shot, html } = await withDeadline(step(this.shoot(job, request, viewport)), captureTimeoutMs, () =>
        captureTimedOut(url, captureTimeoutMs),
      );
      const failure = await job.pageFailure(url);
      if (failure) throw failure;
      report(request, 70);
      finished = true;
      return {
        image: shot.image.data,
        format: request.format,
        width: shot.image.width,
        height: shot.image.height,
        truncated: shot.truncated,
        html: Buffer.byteLength(html, 'utf8') <= request.maxSourceBytes ? html : null,
        userAgent,
        blockedRequests: job.blockedRequests(),
      };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.active.delete(job);
      // The window goes now; emptying its session must not hold up the caller.
      this.track(job.dispose({ killRenderer: !finished }).emptied);
    }
  }

  private track(emptied: Promise<void>): void {
    this.emptying.add(emptied);
    void emptied.finally(() => this.emptying.delete(emptied));
  }

  /**
   * Navigates within the navigation time-out. DOMContentLoaded is the bar for failing, as in
   * the Chromium engine: a page whose document arrived but whose `load` never fires (one
   * stalled image) is captured as it is when the time is up. Then a bounded network-idle wait.
   */
  private async load(job: JobWindow, request: CaptureRequest, userAgent: string): Promise<void> {
    const { url, navigationTimeoutMs } = request;
    const timedOut = loadTimedOut(url, navigationTimeoutMs);
    try {
      await withDeadline(navigate(job, url, userAgent), navigationTimeoutMs, () => timedOut);
    } catch (err) {
      const failure = await job.pageFailure(url);
      if (failure) throw failure;
      if (err !== timedOut || !job.documentReady()) throw err;
    }
    await job.networkIdle(NETWORK_IDLE_MAX_MS);
    const failure = await job.pageFailure(url);
    if (failure) throw failure;
  }

  /**
   * Scrolls (full page), screenshots and serialises the page. As in the Chromium engine, a page
   * that started requests while this ran is not done loading: its network is waited for and the
   * picture taken again (takeOnceQuiet).
   */
  private async shoot(
    job: JobWindow,
    request: CaptureRequest,
    viewport: { width: number; height: number },
  ): Promise<{ shot: Shot; html: string }> {
    const options = {
      preset: request.preset,
      viewport,
      format: request.format,
      quality: request.quality ?? DEFAULT_QUALITY,
    };
    if (request.fullPage) {
      await scrollThroughPage(job.contents, {
        maxMs: scrollTimeLimitMs(request.captureTimeoutMs),
        maxHeight: request.maxHeight,
      });
      await job.networkIdle(NETWORK_IDLE_MAX_MS);
    }
    return takeOnceQuiet(job, job.requestsStarted(), async () => {
      const shot = request.fullPage ? await captureFullPage(job, options, request.maxHeight) : await captureViewport(job, options);
      return { shot, html: await readPageSource(job.contents) };
    });
  }
}

/** Loads `url`; resolves at the load event. Failures become CaptureErrors with the network error. */
async function navigate(job: JobWindow, url: string, userAgent: string): Promise<void> {
  const { contents } = job;
  try {
    await contents.loadURL(url, { userAgent });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_TUNNEL_CONNECTION_FAILED') throw egressBlocked(TUNNEL_REFUSED_REASON);
    if (job.downloadStarted()) throw loadFailed(url, 'the address starts a file download');
    // The first navigation was replaced before it committed (a redirect in a script or a
    // meta refresh); the page is whatever replaced it, so wait for that to finish loading.
    if (code === 'ERR_ABORTED' && !contents.isDestroyed() && contents.isLoading()) {
      await once(contents, 'did-stop-loading');
      return;
    }
    throw code ? networkFailure(url, `net::${code}`) : loadFailed(url, String((err as Error)?.message ?? err).slice(0, 300));
  }
}

function report(request: CaptureRequest, progress: number): void {
  try {
    request.onProgress?.(progress);
  } catch {
    // A progress listener's failure is not the capture's.
  }
}
