import { type Browser, chromium } from 'playwright-core';

import { sleep, withDeadline } from '../../deadline.js';
import type { Logger } from '../../logger.js';
import { ContextPrewarmer, type JobContextOptions, type JobPage } from './context-prewarmer.js';
import { PageMemoryGuard } from './page-memory-guard.js';

export interface BrowserLaunchOptions {
  executablePath: string;
  args: string[];
  /** Playwright default switches to leave out. */
  ignoreDefaultArgs: string[];
  /** Spare contexts kept ready. */
  prewarm: number;
  /** A page's renderer using more resident memory than this is killed (PageMemoryGuard). */
  pageMemoryLimitBytes: number;
  launchTimeoutMs: number;
  log: Logger;
  /** Called when the memory guard kills a page's renderer. */
  onRendererKilled?: () => void;
  /** The browser's HOME, whose NSS database holds the authorities it trusts besides its own (nss-trust.ts). @default the service's */
  home?: string;
}

/** Time a polite browser.close() gets before the process group is killed. */
const CLOSE_GRACE_MS = 5_000;

/**
 * One Chromium process and the bookkeeping the engine needs around it: how many captures it
 * served and is serving, whether it is being retired, and a way to kill it when it hangs.
 */
export class BrowserSlot {
  /** Captures started on this browser. */
  captures = 0;
  /** Captures running now. */
  inFlight = 0;
  /** No new captures go here; it closes when the last running one ends. */
  get retiring(): boolean {
    return this.retired;
  }
  private retired = false;
  /** Settles when the browser is gone, whatever the cause. */
  readonly gone: Promise<void>;
  private connected = true;
  private readonly prewarmer: ContextPrewarmer;
  private readonly memoryGuard: PageMemoryGuard | undefined;
  private readonly goneListeners = new Set<() => void>();

  private constructor(
    readonly browser: Browser,
    /** The browser process id (leader of its process group), when Chromium reported it. */
    readonly pid: number | undefined,
    readonly version: string,
    options: BrowserLaunchOptions,
  ) {
    this.prewarmer = new ContextPrewarmer(browser, options.prewarm, options.log);
    this.memoryGuard =
      pid === undefined
        ? undefined
        : new PageMemoryGuard(pid, options.pageMemoryLimitBytes, { busy: () => this.inFlight > 0, log: options.log, onKill: options.onRendererKilled });
    this.gone = new Promise((resolve) =>
      browser.once('disconnected', () => {
        this.connected = false;
        this.memoryGuard?.stop();
        this.prewarmer.dispose();
        for (const listener of this.goneListeners) listener();
        this.goneListeners.clear();
        resolve();
      }),
    );
  }

  /** Calls `listener` when the browser goes; returns a function that stops listening. */
  onGone(listener: () => void): () => void {
    if (!this.isConnected) {
      queueMicrotask(listener);
      return () => undefined;
    }
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  static async launch(options: BrowserLaunchOptions): Promise<BrowserSlot> {
    const browser = await chromium.launch({
      executablePath: options.executablePath,
      args: options.args,
      ignoreDefaultArgs: options.ignoreDefaultArgs,
      headless: true,
      timeout: options.launchTimeoutMs,
      // The browser inherits the service's environment (playwright's default) but for HOME.
      env: options.home ? { ...process.env, HOME: options.home } : undefined,
      // The engine owner closes the browser: a server finishing its jobs on SIGTERM needs it.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    try {
      const pid = await withDeadline(browserPid(browser), options.launchTimeoutMs, () => new Error('Chromium did not answer'));
      return new BrowserSlot(browser, pid, browser.version(), options);
    } catch (err) {
      await browser.close().catch(() => undefined);
      throw err;
    }
  }

  get isConnected(): boolean {
    return this.connected && this.browser.isConnected();
  }

  /**
   * Settles once the browser has answered a round trip over its pipe, or has been found gone,
   * or after a few seconds (a busy browser is not a dead one). A browser killed a moment ago
   * may still look connected: its pipe closes only when the process has finished dying, and
   * this waits for that instead of guessing.
   */
  async ping(): Promise<void> {
    if (!this.isConnected) return;
    const roundTrip = (async () => {
      const session = await this.browser.newBrowserCDPSession();
      await session.send('Browser.getVersion');
      await session.detach();
    })();
    await Promise.race([roundTrip.catch(() => undefined), this.gone, sleep(CLOSE_GRACE_MS)]);
  }

  /**
   * For a page of this browser whose renderer died: the memory limit when our guard killed it for
   * passing it a moment ago (PageMemoryGuard.claimKill), otherwise undefined.
   */
  pageKilledForMemory(): number | undefined {
    return this.memoryGuard?.claimKill() ? this.memoryGuard.limitBytes : undefined;
  }

  /**
   * Lets the pages' renderers use `bytes` more memory than the limit until the returned function
   * is called (PageMemoryGuard.allow): for a capture rendering a bitmap that large.
   */
  allowPageMemory(bytes: number): () => void {
    return this.memoryGuard?.allow(bytes) ?? (() => undefined);
  }

  /** A fresh context for one job (a pre-warmed one when its options match). */
  openJob(options: JobContextOptions): Promise<JobPage> {
    return this.prewarmer.take(options);
  }

  /** Prepares a context for the next job, once a job's capture is over. */
  prepareNext(options: JobContextOptions): void {
    if (!this.retired) this.prewarmer.prepare(options);
  }

  /** Takes no new captures: pre-warmed contexts are dropped, and none are made any more. */
  retire(): void {
    this.retired = true;
    this.prewarmer.dispose();
  }

  /** Closes the browser, killing it when it does not close within a few seconds. */
  async close(): Promise<void> {
    this.prewarmer.dispose();
    if (!this.isConnected) return;
    try {
      await withDeadline(this.browser.close(), CLOSE_GRACE_MS, () => new Error('close timed out'));
    } catch {
      await this.kill();
    }
  }

  /**
   * Kills the browser's whole process group (playwright starts Chromium as a group leader),
   * for a browser that no longer answers. Resolves once playwright saw it go.
   */
  async kill(): Promise<void> {
    this.prewarmer.dispose();
    if (this.pid !== undefined) {
      try {
        process.kill(process.platform === 'win32' ? this.pid : -this.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    } else {
      void this.browser.close().catch(() => undefined);
    }
    await Promise.race([this.gone, sleep(CLOSE_GRACE_MS)]);
  }
}

async function browserPid(browser: Browser): Promise<number | undefined> {
  const session = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = await session.send('SystemInfo.getProcessInfo');
    return processInfo.find((p) => p.type === 'browser')?.id;
  } finally {
    await session.detach().catch(() => undefined);
  }
}
