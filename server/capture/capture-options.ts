// What a capture may ask for beyond its device and format: the options of POST /v1/screenshot,
// resolved for the engine (camelCase, defaults applied where the pipeline needs them). Every
// engine applies them the same way, through the capture pipeline (capture-pipeline.ts).

/** When the page counts as ready to capture. */
export type WaitUntil = 'settled' | 'load' | 'domcontentloaded' | 'networkidle';

/** A rectangle of the page in CSS pixels. */
export interface ClipRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A cookie set before navigation (CDP Network.CookieParam, as much as the API offers). */
export interface CaptureCookie {
  name: string;
  value: string;
  /** @default the page's host */
  domain?: string;
  /** @default / */
  path?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

export interface CaptureOptions {
  /** @default 'settled' for a picture, 'load' for a PDF */
  waitUntil?: WaitUntil;
  /** `settled`: the longest wait for the page to settle after load, ms. @default SETTLE_TIMEOUT_DEFAULT_MS */
  settleTimeoutMs?: number;
  /** Extra wait before the capture, ms. @default 0 */
  delayMs?: number;
  /** Wait until an element matching this is visible; fails with `Timed out waiting for selector <sel>`. */
  waitForSelector?: string;
  /** Capture only the first matching element; fails with `No element matches <sel>`. */
  selector?: string;
  /** Capture this rectangle of the page. */
  clip?: ClipRect;
  /** Elements hidden (`visibility: hidden`) before the capture. */
  hideSelectors?: string[];
  /** Elements painted over with a solid box before the capture (a monitor's `mask_selectors`). */
  maskSelectors?: string[];
  /** CSS added to the page after load. */
  styles?: string;
  /** JavaScript run in the page after load, before the capture (awaited when it returns a promise). */
  scripts?: string;
  /** The first matching element is clicked before the capture. */
  clickSelector?: string;
  /** Requests to ad servers are blocked (lists shipped with the appliance). */
  blockAds?: boolean;
  /** Requests to trackers are blocked (lists shipped with the appliance). */
  blockTrackers?: boolean;
  /** Consent dialogs are dismissed or hidden. */
  blockCookieBanners?: boolean;
  /** `prefers-color-scheme: dark`. */
  darkMode?: boolean;
  /** `prefers-reduced-motion: reduce`, and CSS animations and transitions frozen. */
  reducedMotion?: boolean;
  /** @default 'screen' */
  mediaType?: 'screen' | 'print';
  /** Extra request headers, sent only to the page's own origin. */
  headers?: Record<string, string>;
  cookies?: CaptureCookie[];
  /** Replaces the engine's user agent for the preset. */
  userAgent?: string;
  /** HTTP Basic credentials, sent only to the page's own origin. */
  httpAuth?: { username: string; password: string };
  /** IANA time zone, e.g. Europe/Paris. */
  timezone?: string;
  /** BCP 47 tag: Accept-Language and navigator.language. */
  locale?: string;
  /** Fail with `The page answered <status>` when the main document answers 4xx or 5xx. */
  failOnHttpError?: boolean;
  /** Outputs computed from the same render (extract.ts). @default none */
  extract?: Array<'markdown' | 'text' | 'metadata' | 'links'>;
  /** Also record the page's HTTP exchanges for a signed evidence bundle (page-exchanges.ts). @default false */
  evidence?: boolean;
  /** The picture resized to this width (image-size.ts); with `imageHeight`, fitted inside the box. */
  imageWidth?: number;
  /** The picture resized to this height (image-size.ts). */
  imageHeight?: number;
  /** A transparent background where the page paints none (png and webp). */
  omitBackground?: boolean;
  /** A document rendered as the page instead of loading the request's url (html-document.ts). */
  html?: HtmlDocument;
}

/** The `html` of a request: the document, and the address it is rendered at. */
export interface HtmlDocument {
  document: string;
  /** `base_url`; absent: an address of no host's (html-document.ts). */
  baseUrl?: string;
}
