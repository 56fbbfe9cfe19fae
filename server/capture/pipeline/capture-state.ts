import type { Logger } from '../../logger.js';
import type { CaptureOptions } from '../capture-options.js';
import type { CaptureRequest } from '../engine.js';
import type { PageFacts } from '../in-page/page-scripts.js';
import type { PageProbe } from '../in-page/warning-probe.js';
import type { BlankCheck, TakenPicture } from '../outputs/capture-warnings.js';
import type { Extracted } from '../outputs/extract.js';
import type { EncodedImage } from '../outputs/image-encoder.js';
import type { Cut } from './capture-clip.js';
import type { MainFrame } from './main-frame.js';
import type { PageConsole } from './page-console.js';
import type { PageDriver } from './page-driver.js';
import type { PageExchanges, RecordedExchange } from './page-exchanges.js';
import type { PageTraffic } from './page-traffic.js';
import type { SettleReport } from './settle-report.js';
import type { Tripwire } from './tripwire.js';

/** What an engine tells the pipeline about its page, beyond the driver. */
export interface PipelineOptions {
  /** The user agent the engine set up the page with; the result reports it. */
  userAgent: string;
  /**
   * Failures from outside the page (the browser gone, the renderer crashed, the caller's abort,
   * the engine closing): every step loses to them, and the capture fails with the first.
   */
  tripwire: Tripwire;
  /**
   * The device pixel ratio the screenshot's clip must carry itself (clipFor's `clipDpr`): 1 when
   * the driver's own session emulates the device, as both engines' do; the preset's for a
   * session that does not.
   */
  clipDpr: number;
  /** A frame counts as rendered after this long without one, for a window that may render none. @default 0 (wait for it) */
  frameFallbackMs?: number;
  /** The egress proxy, asked why it refused a tunnel. @default none: direct connections */
  proxyServer?: string;
  /** Lets the page's renderer use this many bytes beyond its memory limit, for the screenshot's bitmap. @default none */
  allowMemory?: (bytes: number) => void;
  /** Where notes about a page go (one whose `load` never fired). @default silent */
  log?: Logger;
}

/**
 * One capture on its way through the steps (CAPTURE_STEPS): the page and what follows it, the
 * request, and what the steps found so far, each field set by the step that finds it.
 */
export interface Capture {
  readonly driver: PageDriver;
  readonly frame: MainFrame;
  readonly traffic: PageTraffic;
  readonly console: PageConsole;
  /** The request, its `url` the document's address when it renders `html` (atDocumentAddress). */
  readonly request: CaptureRequest;
  readonly options: PipelineOptions;
  /** The request's options (none: `{}`). */
  readonly asked: CaptureOptions;
  /** Stops sending the request's headers to the page's origin. */
  stopHeaders: () => void;
  /** When the navigation began (a Date.now() time): the waits for the page to load end within its time-out from then. */
  navigationStarted: number;
  /** When the picture must be done by (a Date.now() time): the capture time-out from when it began. */
  deadline: number;
  /** The requests the page had started when its network was last found idle; more since means it is still loading. */
  requestsSeen: number;
  /** What the wait for a settled page found (wait_until: settled); absent when it did not wait. */
  settle?: SettleReport;
  /** The picture (or PDF) as taken, with the page's source and facts; set by the step that takes it. */
  taken?: Taken;
  /** How the picture's blankness was decided; null for a PDF. */
  blank: BlankCheck<TakenPicture> | null;
  /** The image the capture returns, encoded as the request asks. */
  image?: EncodedImage;
  /** What `extract` asked for, with its warnings; absent when nothing was. */
  extracted?: Extracted;
  /** `evidence`: the page's HTTP exchanges being recorded, from before navigation. */
  exchanges?: PageExchanges;
  /** `evidence`: the exchanges recorded, once the picture and the outputs are taken. */
  recorded?: RecordedExchange[];
}

/** One screenshot with the page's source and facts, and what the page showed of itself as it was taken. */
export interface Taken extends TakenPicture {
  truncated: boolean;
  /** The document's source, or null when it was larger than the request's maxSourceBytes. */
  html: string | null;
  page: PageFacts;
  probe: PageProbe;
  /** What a cut picture kept of what was asked, in CSS pixels; null when it was not cut. */
  cut: Cut | null;
}

/** A step of the capture: a small piece of work on the page, which notes what it found in the capture. */
export type CaptureStep = (capture: Capture) => Promise<void>;

/** Whether a step applies to this capture. */
export type CaptureCondition = (capture: Capture) => boolean;
