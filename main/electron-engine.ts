import { once } from 'node:events';
import { app } from 'electron';
import {
  CaptureError,
  type CaptureEngine,
  type CaptureRequest,
  type CaptureResult,
} from '../server/capture/engine.js';
import { userAgentFor } from '../server/capture/presets.js';
import { seconds, sleep, withDeadline } from './deadline.js';
import { emulateDevice } from './device-emulation.js';
import { DEFAULT_QUALITY } from './image-encoding.js';
import { openJobWindow, type JobWindow } from './job-window.js';
import { captureFullPage, captureViewport, readPageSource } from './page-capture.js';

export interface ElectronEngineOptions {
  /**
   * The egress guard's forward proxy ("http://127.0.0.1:PORT"). Every job session sends all
   * its traffic, loopback included, through it. Unset: direct connections, which only the
   * conformance runner uses.
   */
  proxyServer?: string;
}

/** The network counts as idle after this long without an open request (as Playwright's networkidle). */
const NETWORK_QUIET_MS = 500;
/** Longest wait for network idle after the load event; a page that polls forever gets this much. */
const NETWORK_IDLE_MAX_MS = 5_000;

/**
 * Captures with hidden BrowserWindows in the Electron main process: one window per job, each
 * in its own in-memory session partition behind the egress guard (see job-window.ts). The
 * viewport comes from capturePage, full pages from the debugger's captureBeyondViewport.
 *
 * The host app must keep running when the last window closes (listen to
 * `window-all-closed`), or it quits after the first capture.
 */
export class ElectronEngine implements CaptureEngine {
  readonly name = 'electron';
  private started = false;
  private readonly active = new Set<JobWindow>();

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
    await Promise.all(jobs.map((job) => job.dispose({ killRenderer: true })));
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    if (!this.started) throw new CaptureError('The Electron capture engine is not started');
    const { preset, signal } = request;
    if (signal?.aborted) throw abortReason(signal);
    const viewport = request.viewport ?? { width: preset.width, height: preset.height };
    const userAgent = userAgentFor(preset, request.googlebot, this.chromiumVersion());
    const job = await openJobWindow({ viewport, userAgent, proxyServer: this.options.proxyServer });
    this.active.add(job);
    const onAbort = () => job.interrupt(abortReason(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    let finished = false;
    try {
      // Every step also loses to a crash, a hang, the caller's abort or the engine closing.
      const step = <T>(work: Promise<T>) => Promise.race([work, job.interrupted]);
      await step(emulateDevice(job.contents, preset, viewport));
      await step(this.load(job, request, userAgent));
      request.onProgress?.(40);

      const shotOptions = { preset, viewport, format: request.format, quality: request.quality ?? DEFAULT_QUALITY };
      const { shot, html } = await step(
        withDeadline(
          (async () => {
            const shot = request.fullPage
              ? await captureFullPage(job, shotOptions, request.maxHeight)
              : await captureViewport(job, shotOptions);
            request.onProgress?.(70);
            return { shot, html: await readPageSource(job.contents, request.maxSourceBytes) };
          })(),
          request.captureTimeoutMs,
          () => new CaptureError(`Timed out after ${seconds(request.captureTimeoutMs)} s capturing ${request.url}`),
        ),
      );
      finished = true;
      return {
        image: shot.image,
        format: request.format,
        width: shot.width,
        height: shot.height,
        truncated: shot.truncated,
        html,
        userAgent,
        blockedRequests: job.blockedRequests(),
      };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.active.delete(job);
      await job.dispose({ killRenderer: !finished });
    }
  }

  /** The load event within the navigation time-out, then a bounded wait for network idle. */
  private async load(job: JobWindow, request: CaptureRequest, userAgent: string): Promise<void> {
    const { url, navigationTimeoutMs } = request;
    const deadline = Date.now() + navigationTimeoutMs;
    await withDeadline(
      navigate(job, url, userAgent),
      navigationTimeoutMs,
      () => new CaptureError(`Timed out after ${seconds(navigationTimeoutMs)} s loading ${url}`),
    );
    const denial = job.pageDenial();
    if (denial) throw new CaptureError(`blocked by egress policy: ${denial}`);
    await waitForNetworkIdle(job, Math.min(deadline - Date.now(), NETWORK_IDLE_MAX_MS));
  }
}

async function navigate(job: JobWindow, url: string, userAgent: string): Promise<void> {
  const { contents } = job;
  try {
    await contents.loadURL(url, { userAgent });
  } catch (err) {
    const denial = job.pageDenial();
    if (denial) throw new CaptureError(`blocked by egress policy: ${denial}`);
    const code = (err as { code?: string }).code;
    // The first navigation was replaced before it committed (a redirect in a script or a
    // meta refresh); the page is whatever replaced it, so wait for that to finish loading.
    if (code === 'ERR_ABORTED' && !contents.isDestroyed() && contents.isLoading()) {
      await once(contents, 'did-stop-loading');
      return;
    }
    throw new CaptureError(`Could not load ${url}: ${code ?? (err as Error).message}`);
  }
}

/** Resolves once no request has been open for NETWORK_QUIET_MS, or after `budgetMs` anyway. */
async function waitForNetworkIdle(job: JobWindow, budgetMs: number): Promise<void> {
  const giveUpAt = Date.now() + Math.max(0, budgetMs);
  let quietSince = Date.now();
  while (Date.now() < giveUpAt) {
    if (job.inFlight() > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= NETWORK_QUIET_MS) return;
    await sleep(50);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new CaptureError('The capture was cancelled');
}
