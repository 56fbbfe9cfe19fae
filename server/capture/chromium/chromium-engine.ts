import { withDeadline } from '../../deadline.js';
import { type Logger, silentLogger } from '../../logger.js';
import { pageOutOfMemory } from '../capture-failures.js';
import { capturePage } from '../capture-pipeline.js';
import {
  BrowserCrashedError,
  type CaptureEngine,
  type CaptureRequest,
  type CaptureResult,
  PageCrashedError,
} from '../engine.js';
import { type EngineEvents, tell } from '../engine-events.js';
import { Tripwire } from '../pipeline/tripwire.js';
import { userAgentFor } from '../presets.js';
import { BrowserSlot } from './browser-slot.js';
import { type ChromiumCommandLine, chromiumCommandLine } from './chromium-switches.js';
import type { JobContextOptions, JobPage } from './context-prewarmer.js';
import { type NssHome, nssHome } from './nss-trust.js';
import { PipeGuard } from './pipe-guard.js';

export interface ChromiumEngineOptions {
  /** The Chromium executable, usually from findChromium(). */
  executablePath: string;
  /** Captures one browser process serves before a fresh one replaces it. @default 200 */
  recycleAfter?: number;
  /**
   * Egress proxy every browser connection goes through, loopback included: the switches of
   * egressChromiumArgs() (`--proxy-server`, `--proxy-bypass-list=<-loopback>`, no WebRTC UDP,
   * no QUIC). Contexts always block service workers. @default none: direct connections
   */
  proxyServer?: string;
  /** Told of relaunches, kills and renderers stopped for memory, as they happen (the metrics). @default none */
  events?: EngineEvents;
  /**
   * Certificate authorities (PEM) the browser trusts besides its own roots (`--ca-file`), given
   * to it in an NSS database of its own (nss-trust.ts, which needs certutil). @default []
   */
  trustedCertificates?: readonly string[];
  /** More Chromium switches, after ours. @default [] */
  extraArgs?: string[];
  /**
   * Where the engine reports relaunches, hung browsers, renderers stopped for their memory and
   * pages whose `load` never fired. @default silentLogger
   */
  log?: Logger;
  /**
   * Fresh contexts kept ready for a stream of one kind of job (and one of each other kind
   * recently captured: ContextPrewarmer). Two, so that two jobs arriving together (the
   * default concurrency) each find one ready; in a steady stream one or two make no measurable
   * difference (2.37 against 2.38 captures/s back to back, 2.77 against 2.81 two at a time, the
   * benchmark's mix in-process). A spare is a renderer process: the service's peak memory in the
   * benchmark was 26–66 MiB higher with two. @default 2
   */
  prewarm?: number;
  /** Time allowed for Chromium to start. @default 30000 */
  launchTimeoutMs?: number;
  /**
   * Resident memory a page's renderer may use, in MiB; a renderer above it is killed and its
   * capture fails saying so (PageMemoryGuard). @default 2048
   */
  pageMemoryMb?: number;
  /**
   * Time the browser has to open a capture's context and page; a browser that takes longer is
   * taken to have hung and is killed, which costs every capture running in it a retry.
   * @default 10000
   */
  openPageTimeoutMs?: number;
  /**
   * Time a capture's context has to close; past it the browser is taken to have hung and is
   * killed, which costs every capture running in it a retry. CLOSE_CONTEXT_TIMEOUT_MS says
   * why it is this long. @default 20000
   */
  closeContextTimeoutMs?: number;
}

const DEFAULT_PAGE_MEMORY_MB = 2048;
const OPEN_PAGE_TIMEOUT_MS = 10_000;
/**
 * A context usually closes in well under a second, even on a loaded machine (two captures at a
 * time on 2 cores at a load average near 10: median 61 ms, slowest 201 ms of 40; a page in an
 * endless script loop, or in the middle of a 30,000 px screenshot, closes as fast). Yet a limit
 * of 5 s was passed in a test run on such a machine: a healthy browser was killed and every
 * capture in it retried, the dearest mistake to make when the machine is busiest. Noticing a
 * browser that has truly hung a few seconds later costs less: that is rare, and it delays only
 * the retries of the captures sent to it meanwhile.
 */
const CLOSE_CONTEXT_TIMEOUT_MS = 20_000;
/**
 * Captures pages in the system Chromium through playwright-core: one browser process, a fresh
 * isolated context per capture, whose page the capture pipeline (capture-pipeline.ts) drives
 * over a CDP session of its own. A hung or crashed browser is killed and relaunched; the
 * browser is replaced after `recycleAfter` captures without disturbing running ones.
 */
export class ChromiumEngine implements CaptureEngine {
  readonly name = 'chromium';
  private readonly recycleAfter: number;
  private readonly openPageTimeoutMs: number;
  private readonly closeContextTimeoutMs: number;
  private readonly commandLine: ChromiumCommandLine;
  private readonly log: Logger;
  /** The browser new captures go to. */
  private current: BrowserSlot | undefined;
  private launching: Promise<BrowserSlot> | undefined;
  /** Every live browser, retiring ones included. */
  private readonly slots = new Set<BrowserSlot>();
  private version: string | undefined;
  private closed = false;
  /** Made at the first launch, removed at close(). */
  private guard: Promise<PipeGuard> | undefined;
  /** The browsers' HOME when they trust more authorities: made at the first launch, removed at close(). */
  private trust: Promise<NssHome> | undefined;

  constructor(private readonly options: ChromiumEngineOptions) {
    this.recycleAfter = Math.max(1, options.recycleAfter ?? 200);
    this.openPageTimeoutMs = options.openPageTimeoutMs ?? OPEN_PAGE_TIMEOUT_MS;
    this.closeContextTimeoutMs = options.closeContextTimeoutMs ?? CLOSE_CONTEXT_TIMEOUT_MS;
    this.log = options.log ?? silentLogger;
    this.commandLine = chromiumCommandLine(options.proxyServer, options.extraArgs);
  }

  async start(): Promise<void> {
    await this.currentSlot();
  }

  isReady(): boolean {
    if (this.closed) return false;
    return [...this.slots].some((slot) => slot.isConnected);
  }

  chromiumVersion(): string {
    if (!this.version) throw new Error('ChromiumEngine.chromiumVersion() is known only after start()');
    return this.version;
  }

  /**
   * Settles once the current browser has answered or been found gone, so that isReady() is
   * true only of a browser that is still there. EnginePool asks this of its other engines
   * after one browser crashed: whatever killed it (the OOM killer, `pkill chromium`) may have
   * killed the others too, and the job's retry should not be sent to one of them.
   */
  async checkBrowser(): Promise<void> {
    await this.current?.ping();
  }

  /** The current browser's process id (for diagnostics and crash tests). */
  browserPid(): number | undefined {
    return this.current?.pid;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => undefined);
    this.current = undefined;
    await Promise.all([...this.slots].map((slot) => slot.close()));
    await this.guard?.then((guard) => guard.dispose()).catch(() => undefined);
    await this.trust?.then((trust) => trust.dispose()).catch(() => undefined);
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    if (this.closed) throw new Error('ChromiumEngine is closed');
    request.signal?.throwIfAborted();
    const slot = await this.acquire();
    let closing: Promise<void> = Promise.resolve();
    try {
      return await this.captureOn(slot, request, (p) => (closing = p));
    } finally {
      // The slot counts the capture until its context is closed, so recycling waits for it.
      void closing.finally(() => this.release(slot));
    }
  }

  /**
   * Runs one capture in a fresh context. After a success the context closes in the background
   * (reported through `onClosing`) while the caller stores the result; after a failure it is
   * closed — or the browser killed — before the error is thrown, so the next capture finds a
   * healthy browser.
   */
  private async captureOn(
    slot: BrowserSlot,
    request: CaptureRequest,
    onClosing: (closing: Promise<void>) => void,
  ): Promise<CaptureResult> {
    const { url, preset, signal } = request;
    const viewport = request.viewport ?? { width: preset.width, height: preset.height };
    const userAgent = userAgentFor(preset, request.googlebot, slot.version);
    const proxyServer = request.proxyServer ?? this.options.proxyServer;
    const contextOptions: JobContextOptions = {
      viewport,
      deviceScaleFactor: preset.deviceScaleFactor,
      isMobile: preset.isMobile,
      hasTouch: preset.hasTouch,
      userAgent,
      // Part of the options a spare context is kept for: a stream of one key's jobs finds its own.
      ...(proxyServer !== this.options.proxyServer && proxyServer ? { proxy: { server: proxyServer, bypass: '<-loopback>' as const } } : {}),
    };

    const tripwire = new Tripwire();
    const stopWatchingBrowser = slot.onGone(() =>
      tripwire.trip(new BrowserCrashedError(`Chromium exited while capturing ${url}`)),
    );
    const stopWatchingSignal = tripwire.watch(signal);
    const stopWatching = () => {
      stopWatchingBrowser();
      stopWatchingSignal();
    };

    const opening = slot.openJob(contextOptions);
    let job: JobPage;
    try {
      job = await tripwire.race(
        withDeadline(opening, this.openPageTimeoutMs, () => new BrowserCrashedError('Chromium did not open a page in time')),
      );
    } catch (err) {
      stopWatching();
      void opening.then((late) => late.context.close()).catch(() => undefined);
      if (err instanceof BrowserCrashedError && slot.isConnected) await this.kill(slot, 'it did not open a page in time');
      throw this.explain(err, slot, tripwire, signal);
    }

    job.page.once('crash', () => {
      // Whether our guard killed it decides: that page fails, any other death is retried.
      const limit = slot.pageKilledForMemory();
      tripwire.trip(limit === undefined ? new PageCrashedError(url) : pageOutOfMemory(url, limit));
    });
    // Memory the page's renderer may use beyond the limit for the screenshot's bitmap, held until
    // the context (and with it the renderer, which keeps that memory) is closed.
    let releaseMemory = () => {};
    const allowMemory = (bytes: number) => {
      releaseMemory();
      releaseMemory = slot.allowPageMemory(bytes);
    };
    const finish = () => {
      stopWatching();
      const closing = this.closeJob(slot, job);
      void closing.finally(() => releaseMemory());
      onClosing(closing.then(() => undefined));
      slot.prepareNext(contextOptions);
      return closing;
    };
    let result: CaptureResult;
    try {
      result = await capturePage(job.driver, request, {
        userAgent,
        tripwire,
        // The pipeline's session emulates the device itself (openJobPage), as Electron's debugger does.
        clipDpr: 1,
        proxyServer,
        allowMemory,
        log: this.log,
      });
    } catch (err) {
      const explained = this.explain(err, slot, tripwire, signal);
      // A browser that cannot even close a context has hung (and was killed), which is not
      // the page's fault: the job deserves its retry.
      const closed = await finish();
      if (closed !== 'closed' && !signal?.aborted && !(explained instanceof BrowserCrashedError)) {
        throw new BrowserCrashedError(`Chromium stopped answering while capturing ${url}`);
      }
      throw explained;
    }
    void finish();
    return result;
  }

  /** Why a capture failed, in the terms the job service acts on. */
  private explain(err: unknown, slot: BrowserSlot, tripwire: Tripwire, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason ?? err;
    if (!slot.isConnected) {
      return err instanceof BrowserCrashedError ? err : new BrowserCrashedError(`Chromium exited during the capture: ${String(err)}`);
    }
    return tripwire.error ? tripwire.error.error : err;
  }

  /** Closes a job's context, killing the browser when that does not finish in time. */
  private async closeJob(slot: BrowserSlot, job: JobPage): Promise<'closed' | 'killed' | 'gone'> {
    if (!slot.isConnected) return 'gone';
    try {
      await withDeadline(job.context.close(), this.closeContextTimeoutMs, () => new Error('context close timed out'));
      return 'closed';
    } catch {
      if (!slot.isConnected) return 'gone';
      await this.kill(slot, `a context did not close within ${this.closeContextTimeoutMs} ms`);
      return 'killed';
    }
  }

  private async kill(slot: BrowserSlot, why: string): Promise<void> {
    this.log.warn({ pid: slot.pid }, `killing the browser because ${why}`);
    tell(this.options.events, 'browserKilled');
    if (this.current === slot) this.current = undefined;
    await slot.kill();
  }

  private async acquire(): Promise<BrowserSlot> {
    const slot = await this.currentSlot();
    slot.captures++;
    slot.inFlight++;
    if (slot.captures >= this.recycleAfter && this.current === slot) {
      // Later captures go to a new browser; this one closes when its last capture ends.
      slot.retire();
      this.current = undefined;
      this.launchInBackground('recycling the browser', 'recycled');
    }
    return slot;
  }

  private release(slot: BrowserSlot): void {
    slot.inFlight--;
    if (slot.retiring && slot.inFlight === 0) void slot.close();
  }

  private currentSlot(): Promise<BrowserSlot> {
    if (this.current?.isConnected) return Promise.resolve(this.current);
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<BrowserSlot> {
    if (this.closed) throw new Error('ChromiumEngine is closed');
    this.guard ??= PipeGuard.create(this.options.executablePath);
    const certificates = this.options.trustedCertificates ?? [];
    if (certificates.length) this.trust ??= nssHome(certificates);
    const slot = await BrowserSlot.launch({
      executablePath: (await this.guard).executablePath,
      home: (await this.trust)?.home,
      ...this.commandLine,
      prewarm: Math.max(0, this.options.prewarm ?? 2),
      pageMemoryLimitBytes: (this.options.pageMemoryMb ?? DEFAULT_PAGE_MEMORY_MB) * 2 ** 20,
      launchTimeoutMs: this.options.launchTimeoutMs ?? 30_000,
      log: this.log,
      onRendererKilled: () => tell(this.options.events, 'rendererKilled'),
    });
    if (this.closed) {
      await slot.close();
      throw new Error('ChromiumEngine is closed');
    }
    this.version = slot.version;
    this.slots.add(slot);
    this.current = slot;
    void slot.gone.then(() => this.onGone(slot));
    return slot;
  }

  private onGone(slot: BrowserSlot): void {
    this.slots.delete(slot);
    if (this.current !== slot) return;
    this.current = undefined;
    if (!this.closed) this.launchInBackground('the browser exited', 'exited');
  }

  /** A browser that exited unasked for is worth a warning; recycling one is routine. */
  private launchInBackground(why: string, reason: 'recycled' | 'exited'): void {
    if (this.closed) return;
    this.log[reason === 'exited' ? 'warn' : 'info'](`starting a new browser (${why})`);
    tell(this.options.events, 'browserStarting', reason);
    this.currentSlot().catch((err: unknown) => this.log.error({ err }, 'could not start the browser'));
  }
}
