import { app } from 'electron';

import { capturePage } from '../server/capture/capture-pipeline.js';
import { type CaptureEngine, CaptureError, type CaptureRequest, type CaptureResult } from '../server/capture/engine.js';
import { Tripwire } from '../server/capture/pipeline/tripwire.js';
import { userAgentFor } from '../server/capture/presets.js';
import { type ChainChecker, chainChecker } from '../server/egress/trusted-authorities.js';
import type { Logger } from '../server/logger.js';
import { emulateDevice } from './device-emulation.js';
import { type JobWindow, openJobWindow } from './job-window.js';

export interface ElectronEngineOptions {
  /**
   * The egress guard's forward proxy ("http://127.0.0.1:PORT"). Every job session sends all
   * its traffic, loopback included, through it. @default none: direct connections, which only
   * the conformance runner uses
   */
  proxyServer?: string;
  /**
   * Authorities trusted besides the system's (`--ca-file`, SCREENSHOT_CA_FILES), PEM: a chain
   * Chromium finds no trusted root for is accepted when it leads to one of them. @default none
   */
  trustedCertificates?: readonly string[];
  /** Where notes about pages go (one whose `load` never fired). @default silentLogger */
  log?: Logger;
}

/** A hidden window may render no frames; page scripts waiting for one go on after this long. */
const FRAME_FALLBACK_MS = 100;

/**
 * Captures with hidden BrowserWindows in the Electron main process: one window per job, each
 * in its own in-memory session partition behind the egress guard (see job-window.ts), whose
 * debugger the capture pipeline (server/capture/capture-pipeline.ts) drives as the Chromium
 * engine's. A crashed or hung renderer fails its job only, since the "browser" here is the app
 * itself.
 *
 * The host app must keep running when the last window closes (listen to
 * `window-all-closed`), or it quits after the first capture.
 */
export class ElectronEngine implements CaptureEngine {
  readonly name = 'electron';
  private started = false;
  /** Running captures' windows, and the tripwire that stops each. */
  private readonly active = new Map<JobWindow, Tripwire>();
  /** Sessions of finished jobs still being emptied; close() waits for them. */
  private readonly emptying = new Set<Promise<void>>();

  /** Asked about a chain Chromium's roots do not trust; none without --ca-file. */
  private readonly trusts?: ChainChecker;

  constructor(private readonly options: ElectronEngineOptions = {}) {
    if (options.trustedCertificates?.length) this.trusts = chainChecker({ certificates: [...options.trustedCertificates] });
  }

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
    for (const [, tripwire] of jobs) tripwire.trip(new CaptureError('The capture engine was closed'));
    for (const [job] of jobs) this.track(job.dispose({ killRenderer: true }).emptied);
    await Promise.all([...this.emptying]);
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    if (!this.started) throw new CaptureError('The Electron capture engine is not started');
    const { url, preset, signal } = request;
    signal?.throwIfAborted();
    const viewport = request.viewport ?? { width: preset.width, height: preset.height };
    const userAgent = userAgentFor(preset, request.googlebot, this.chromiumVersion());
    const tripwire = new Tripwire();
    const proxyServer = request.proxyServer ?? this.options.proxyServer;
    const job = await openJobWindow({ url, viewport, userAgent, proxyServer, trusts: this.trusts }, tripwire);
    this.active.set(job, tripwire);
    const stopWatching = tripwire.watch(signal);
    let finished = false;
    try {
      // The debugger can set up only a live renderer; about:blank starts one without any traffic.
      await tripwire.race(job.contents.loadURL('about:blank'));
      await tripwire.race(emulateDevice(job.contents, preset, viewport, userAgent));
      const result = await capturePage(job.driver, request, {
        userAgent,
        tripwire,
        // The debugger emulates the device itself, so the clip carries no pixel ratio.
        clipDpr: 1,
        frameFallbackMs: FRAME_FALLBACK_MS,
        proxyServer,
        log: this.options.log,
      });
      finished = true;
      return result;
    } finally {
      stopWatching();
      this.active.delete(job);
      // The window goes now; emptying its session must not hold up the caller.
      this.track(job.dispose({ killRenderer: !finished }).emptied);
    }
  }

  private track(emptied: Promise<void>): void {
    this.emptying.add(emptied);
    void emptied.finally(() => this.emptying.delete(emptied));
  }
}
