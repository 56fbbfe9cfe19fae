import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

import type { Logger } from '../../logger.js';
import { answerTooLarge, isOversizedAnswer } from '../pipeline/answer-bounds.js';
import type { PageDriver } from '../pipeline/page-driver.js';

/** What a job's context is created with. Chromium fixes these for the context's lifetime. */
export interface JobContextOptions {
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  isMobile: boolean;
  hasTouch: boolean;
  userAgent: string;
  /**
   * The context's own proxy (a key's door of the egress proxy), loopback included; none: the
   * browser's. @default none
   */
  proxy?: { server: string; bypass: '<-loopback>' };
}

/** A fresh isolated context with one blank page, ready for one job and closed after it. */
export interface JobPage {
  context: BrowserContext;
  page: Page;
  /** A CDP session of its own on the page, for the capture pipeline. */
  driver: PageDriver;
}

/**
 * Opens a context for one job: service workers are blocked (they would bypass per-request
 * accounting and outlive the job), downloads refused, popups closed as they open. Dialogs are
 * dismissed by playwright and permission prompts are denied in headless mode. Playwright
 * emulates the device on its own session, and the pipeline's session the same way
 * (emulateDevice); the pipeline's session does the rest.
 */
export async function openJobPage(browser: Browser, { proxy, ...options }: JobContextOptions): Promise<JobPage> {
  const context = await browser.newContext({ ...options, ...(proxy ? { proxy } : {}), serviceWorkers: 'block', acceptDownloads: false });
  try {
    const page = await context.newPage();
    context.on('page', (popup) => {
      if (popup !== page) popup.close().catch(() => undefined);
    });
    const session = await context.newCDPSession(page);
    await emulateDevice(session, options);
    return { context, page, driver: sessionDriver(session) };
  } catch (err) {
    await context.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Emulates the device on the pipeline's session as playwright does on its own (the same
 * Emulation.setDeviceMetricsOverride). Each session keeps its own emulation, and
 * Page.captureScreenshot takes its picture under its session's: without this one, a screenshot
 * through the pipeline's session replaced playwright's mobile emulation by none, both for the
 * picture and after it. A phone's page without a viewport meta tag, laid out 980 px wide and
 * zoomed out, was then drawn as a desktop page at 390 px: shrunk into the top left 40 % of the
 * image (the clip measured zoomed out), or, measured again after a request the page started
 * meanwhile (its favicon, say), laid out anew at 390 px.
 */
async function emulateDevice(session: CDPSession, { viewport, deviceScaleFactor, isMobile }: JobContextOptions): Promise<void> {
  const landscape = viewport.width > viewport.height;
  await session.send('Emulation.setDeviceMetricsOverride', {
    mobile: isMobile,
    width: viewport.width,
    height: viewport.height,
    screenWidth: viewport.width,
    screenHeight: viewport.height,
    deviceScaleFactor,
    screenOrientation: isMobile
      ? landscape
        ? { angle: 90, type: 'landscapePrimary' }
        : { angle: 0, type: 'portraitPrimary' }
      : { angle: 0, type: 'landscapePrimary' },
  });
}

/**
 * Playwright's CDP session as a PageDriver: the same calls, typed by playwright's full protocol.
 * An answer the pipe guard stopped for its size fails the capture, saying so.
 */
function sessionDriver(session: CDPSession): PageDriver {
  return {
    send: (method, params) =>
      (session.send(method, params as never) as Promise<never>).catch((err: unknown) => {
        throw isOversizedAnswer(err) ? answerTooLarge(method) : err;
      }),
    on: (event, handler) => void session.on(event, handler as never),
    off: (event, handler) => void session.off(event, handler as never),
  };
}

interface Spare {
  key: string;
  ready: Promise<JobPage | null>;
}

/**
 * Keeps fresh contexts ready so a job does not wait for one (~27 ms for a context, ~95 ms for
 * its first page, measured with Chromium 156 on 2 cores). Each spare serves exactly one job.
 *
 * Spares are made when a job's capture is over (prepare()), not when it starts: made during a
 * capture, a spare competes with it for the browser's main thread and the CPU (measured: the
 * small page's `goto` took 93 ms instead of 48).
 *
 * A context's options (viewport, scale, user agent) are fixed when it is made, so spares are
 * kept per kind of job: `size` of the kind that was just captured, and one of each other kind
 * recently captured, up to `size + 1` in all — a request for all three devices makes three jobs
 * of three kinds, and each finds its spare next time. When a new kind needs room, the oldest
 * spare goes. A job of a kind with no spare gets a context made on the spot.
 */
export class ContextPrewarmer {
  private spares: Spare[] = [];
  private disposed = false;

  constructor(
    private readonly browser: Browser,
    /** Spares kept ready for a stream of one kind of job; 0 turns pre-warming off. */
    private readonly size: number,
    private readonly log: Logger,
  ) {}

  /** A context for one job; the caller closes it. */
  async take(options: JobContextOptions): Promise<JobPage> {
    const key = JSON.stringify(options);
    const index = this.spares.findIndex((spare) => spare.key === key);
    const job = index >= 0 ? await this.spares.splice(index, 1)[0]!.ready : null;
    return job ?? openJobPage(this.browser, options);
  }

  /** Makes spares with these options: one at least, and up to `size` while there is room. */
  prepare(options: JobContextOptions): void {
    if (this.size === 0 || this.disposed || !this.browser.isConnected()) return;
    const key = JSON.stringify(options);
    if (!this.spares.some((spare) => spare.key === key)) {
      const oldest = this.spares[0];
      if (this.spares.length >= this.size + 1) this.discard((spare) => spare === oldest);
      this.add(options, key);
    }
    while (this.spares.length < this.size) this.add(options, key);
  }

  /** How many spares there are (ready or being made) for these options; for diagnostics. */
  sparesFor(options: JobContextOptions): number {
    const key = JSON.stringify(options);
    return this.spares.filter((spare) => spare.key === key).length;
  }

  /** Closes the spares; later takes still work but keep none ready. */
  dispose(): void {
    this.disposed = true;
    this.discard(() => true);
  }

  private add(options: JobContextOptions, key: string): void {
    const ready = openJobPage(this.browser, options).catch((err: unknown) => {
      if (this.browser.isConnected()) this.log.warn({ err }, 'could not prepare a context');
      return null;
    });
    this.spares.push({ key, ready });
  }

  private discard(which: (spare: Spare) => boolean): void {
    const dropped = this.spares.filter(which);
    this.spares = this.spares.filter((spare) => !which(spare));
    for (const spare of dropped) {
      void spare.ready.then((job) => job?.context.close().catch(() => undefined));
    }
  }
}
