import type { CaptureLogin } from './capture-login.js';
import type { CaptureOptions } from './capture-options.js';
import type { ImageFormat } from './image-format.js';
import type { CaptureWarning } from './outputs/capture-warnings.js';
import type { Extracted } from './outputs/extract.js';
import type { RecordedExchange } from './pipeline/page-exchanges.js';
import type { Preset } from './presets.js';

// The formats and the errors of a capture have files of their own, which the pipeline's steps
// import without the engine's interface (that names their results); they are part of it too.
export { BrowserCrashedError, CaptureError, PageCrashedError } from './capture-errors.js';
export { IMAGE_CONTENT_TYPES, type ImageFormat, type PictureFormat } from './image-format.js';

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
  /** A saved login the page is captured with (capture-login.ts). @default none */
  login?: CaptureLogin;
  signal?: AbortSignal;
  /**
   * The egress proxy this capture's connections go through, when it is not the engine's own: the
   * door of the proxy that also holds the capture's key to its network scope (EgressProxy.urlFor).
   * The engine gives it to the capture's context (Chromium) or session (Electron) alone.
   * @default the engine's proxy
   */
  proxyServer?: string;
  /** Called with 40 when the page has loaded and 70 when the image is captured. */
  onProgress?: (progress: number) => void;
}

export interface CaptureResult {
  image: Buffer;
  format: ImageFormat;
  /** Image size in device pixels (for a PDF: its first page, in points). */
  width: number;
  height: number;
  /**
   * Image pixels per CSS pixel of the page: the device scale factor, times what `image_width` /
   * `image_height` resized the picture by (1 for a PDF). Regions and masks in CSS px map onto
   * the image by it.
   */
  pictureScale: number;
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
  /** `options.evidence`: the page's HTTP exchanges, as the browser saw them (page-exchanges.ts); absent otherwise. */
  exchanges?: RecordedExchange[];
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
