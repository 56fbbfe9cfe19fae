import type { CaptureOptions } from './capture-options.js';
import type { CaptureWarning } from './outputs/capture-warnings.js';
import type { Extracted } from './outputs/extract.js';
import type { Preset } from './presets.js';

/** What a capture produces: an image, or a PDF of the page. */
export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'pdf';
/** The formats that are pictures (everything but pdf). */
export type PictureFormat = Exclude<ImageFormat, 'pdf'>;

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
};

/** One capture, fully resolved: the engine applies it and decides nothing about policy. */
export interface CaptureRequest {
  url: string;
  preset: Preset;
  /** Viewport override in CSS pixels; defaults to the preset's size. */
  viewport?: { width: number; height: number };
  fullPage: boolean;
  googlebot: boolean;
  format: ImageFormat;
  /** 1–100, jpeg and webp only. @default 80 */
  quality?: number;
  /** Largest full-page height in CSS pixels; taller pages are cut and `truncated` is set. */
  maxHeight: number;
  /** Time allowed for navigation (load event, then a bounded wait for network idle). */
  navigationTimeoutMs: number;
  /** Time allowed for the screenshot itself, including scrolling for lazy content. */
  captureTimeoutMs: number;
  /** Largest page source kept, in bytes; a larger one is not returned. */
  maxSourceBytes: number;
  /** The options of POST /v1/screenshot beyond device and format. @default none */
  options?: CaptureOptions;
  signal?: AbortSignal;
  /** Called with 40 when the page has loaded and 70 when the image is captured. */
  onProgress?: (progress: number) => void;
}

export interface CaptureResult {
  image: Buffer;
  format: ImageFormat;
  /** Image size in device pixels (for a PDF: its first page, in points). */
  width: number;
  height: number;
  /** True when the capture was cut in height: at `maxHeight`, or at MAX_CAPTURE_PIXELS (capture-clip.ts). */
  truncated: boolean;
  /** The page's serialised HTML, or null when it was larger than `maxSourceBytes`. */
  html: string | null;
  /** The user agent the page was loaded with. */
  userAgent: string;
  /**
   * Sub-requests the egress proxy refused (a response carrying `x-egress-denied`, or a
   * tunnel the proxy would not open).
   */
  blockedRequests: number;
  /** The main document's HTTP status, when it came over HTTP. */
  httpStatus: number | null;
  /** The address of the document captured, after redirects. */
  finalUrl: string;
  /** The document's title, as `document.title` gives it ('' when none). */
  pageTitle: string;
  /** What may be wrong with the picture (capture-warnings.ts); [] when all is well. */
  warnings: CaptureWarning[];
  /** What `options.extract` asked for (extract.ts); absent when nothing was. */
  extracted?: Omit<Extracted, 'warnings'>;
}

/**
 * A browser that turns a CaptureRequest into an image. Implementations: ChromiumEngine
 * (playwright-core, headless) and ElectronEngine (hidden BrowserWindows); both open a page and
 * hand it to the one capture pipeline (capture-pipeline.ts), and both pass the shared
 * conformance suite in test/capture/.
 */
export interface CaptureEngine {
  readonly name: string;
  start(): Promise<void>;
  capture(request: CaptureRequest): Promise<CaptureResult>;
  /** True while the browser is up and accepting captures. */
  isReady(): boolean;
  /** The real Chromium version, e.g. "156.0.8078.79"; valid after start(). */
  chromiumVersion(): string;
  /** Browser processes the engine captures in, how many are up, and which are down. @default one, up while isReady() */
  browsers?(): BrowserCount;
  close(): Promise<void>;
}

/** The browsers of an engine: how many, how many are up, and which are down (numbered from 1). */
export interface BrowserCount {
  total: number;
  ready: number;
  down: number[];
}

/** One browser, up or down: the count of an engine that has no browsers() of its own. */
export const oneBrowser = (up: boolean): BrowserCount => ({ total: 1, ready: up ? 1 : 0, down: up ? [] : [1] });

/** A capture that failed because of the page (time-out, DNS, HTTP error page is NOT one). */
export class CaptureError extends Error {
  override readonly name = 'CaptureError';
}

/** The browser crashed or disconnected during the capture; the job may be retried once. */
export class BrowserCrashedError extends Error {
  override readonly name: string = 'BrowserCrashedError';
}

/**
 * The page's renderer process died while the browser stayed up: killed from outside (the OOM
 * killer, an operator's `kill`) or crashed. Nothing shows the page caused it, so it is retried
 * like a browser crash. A renderer the engine's own memory guard stopped is not this, but a
 * CaptureError saying so: that page would only grow past the limit again.
 */
export class PageCrashedError extends BrowserCrashedError {
  override readonly name: string = 'PageCrashedError';
  constructor(readonly url: string) {
    super(`The page crashed while capturing ${url}`);
  }
}
