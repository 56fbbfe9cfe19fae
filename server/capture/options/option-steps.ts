import { sleep } from '../../deadline.js';
import type { CaptureOptions, ClipRect } from '../capture-options.js';
import { CaptureError } from '../engine.js';
import { clickPoint, elementRect, injectStyles, type StyleRequest, waitForVisible } from '../in-page/option-scripts.js';
import { evaluate, listen, type PageDriver } from '../pipeline/page-driver.js';

// The capture options applied to a page through CDP, so every engine applies them alike: what
// must be in place before navigation (emulation, user agent, cookies, headers), and the steps
// between load and the picture (wait, click, script, styles, delay). Each step costs nothing
// when its option is absent.

/** The job's error when a wait_for_selector never matched a visible element. */
export const selectorTimedOut = (selector: string) => new CaptureError(`Timed out waiting for selector ${selector}`);
/** The job's error when `selector` (or `click_selector`) matched nothing. */
export const noElementMatches = (selector: string) => new CaptureError(`No element matches ${selector}`);
/** The job's error when the main document answered 4xx or 5xx and fail_on_http_error was asked for. */
export const httpErrorAnswered = (status: number) => new CaptureError(`The page answered ${status}`);

/** Quiet time after which the page counts as idle for wait_until: networkidle. */
export const NETWORK_IDLE_QUIET_MS = 500;

/** Time left for the picture when wait_for_selector gives up. */
const SELECTOR_WAIT_MARGIN_MS = 1_000;

/** Lets a click's effects (a menu opening, a fetch it starts) show before the capture. */
const AFTER_CLICK_MS = 100;

/**
 * Sets what the options ask of the page before it is navigated to `url`: media emulation, time
 * zone, locale, user agent, cookies, and the headers (and HTTP Basic credentials) sent to the
 * page's own origin only. `userAgent` is the engine's; `options.userAgent` replaces it.
 * Returns a function that stops the header interception.
 */
export async function beforeNavigation(
  driver: PageDriver,
  url: string,
  userAgent: string,
  options: CaptureOptions,
  siteAuth?: { origin: string; username: string; password: string },
): Promise<() => void> {
  const steps: Array<Promise<unknown>> = [];
  const features: Array<{ name: string; value: string }> = [];
  if (options.darkMode) features.push({ name: 'prefers-color-scheme', value: 'dark' });
  if (options.reducedMotion) features.push({ name: 'prefers-reduced-motion', value: 'reduce' });
  if (features.length || options.mediaType === 'print') {
    steps.push(driver.send('Emulation.setEmulatedMedia', { media: options.mediaType === 'print' ? 'print' : '', features }));
  }
  if (options.timezone) steps.push(driver.send('Emulation.setTimezoneOverride', { timezoneId: options.timezone }));
  if (options.locale) steps.push(driver.send('Emulation.setLocaleOverride', { locale: options.locale }));
  if (options.userAgent || options.locale) {
    steps.push(
      driver.send('Network.setUserAgentOverride', {
        userAgent: options.userAgent ?? userAgent,
        ...(options.locale ? { acceptLanguage: acceptLanguage(options.locale) } : {}),
      }),
    );
  }
  if (options.cookies?.length) {
    const cookies = options.cookies.map(({ httpOnly, ...cookie }) => ({
      ...cookie,
      ...(httpOnly === undefined ? {} : { httpOnly }),
      ...(cookie.domain ? {} : { url }),
      path: cookie.path ?? '/',
    }));
    steps.push(driver.send('Network.setCookies', { cookies }));
  }
  await Promise.all(steps);
  const origins = new Map([[new URL(url).origin, originHeaders(options)]]);
  // A saved basic login's credentials go to its own site only, whichever page is captured.
  if (siteAuth) origins.set(siteAuth.origin, [...(origins.get(siteAuth.origin) ?? []), basicAuthorization(siteAuth)]);
  return sendHeadersToOrigins(driver, origins);
}

function basicAuthorization({ username, password }: { username: string; password: string }): { name: string; value: string } {
  return { name: 'Authorization', value: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}` };
}

/** `fr-FR` → `fr-FR,fr;q=0.9`: the tag, then its language alone. */
function acceptLanguage(locale: string): string {
  const language = locale.split('-')[0]!;
  return language === locale ? locale : `${locale},${language};q=0.9`;
}

/** The headers the page's own origin gets: `headers`, and `Authorization` for `httpAuth`. */
function originHeaders(options: CaptureOptions): Array<{ name: string; value: string }> {
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) => ({ name, value }));
  if (options.httpAuth) headers.push(basicAuthorization(options.httpAuth));
  return headers;
}

/**
 * Adds each origin's headers to every request to that origin (a redirect elsewhere, and every
 * other origin the page loads from, gets none of them): requests to those origins are paused
 * (Fetch) and continued with the headers. Returns a function that stops it.
 */
async function sendHeadersToOrigins(driver: PageDriver, byOrigin: Map<string, Array<{ name: string; value: string }>>): Promise<() => void> {
  const origins = [...byOrigin].filter(([, extra]) => extra.length);
  if (!origins.length) return () => undefined;
  const stop = listen(driver, {
    'Fetch.requestPaused': ({ requestId, request }) => {
      const extra = origins.find(([origin]) => sameOrigin(request.url, origin))?.[1];
      const replaced = new Set(extra?.map((h) => h.name.toLowerCase()));
      const headers = extra
        ? [...Object.entries(request.headers).filter(([name]) => !replaced.has(name.toLowerCase())).map(([name, value]) => ({ name, value })), ...extra]
        : undefined;
      driver.send('Fetch.continueRequest', { requestId, ...(headers ? { headers } : {}) }).catch(() => undefined);
    },
  });
  await driver.send('Fetch.enable', { patterns: origins.map(([origin]) => ({ urlPattern: `${origin}/*`, requestStage: 'Request' as const })) });
  return stop;
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/**
 * The steps between load and the picture, in this order: wait for `waitForSelector`, click
 * `clickSelector`, run `scripts`, add `styles`, the frozen animations of `reducedMotion`, the
 * hiding of `hideSelectors` and the masks of `maskSelectors`, then wait `delayMs`. Bounded by `deadline` (a Date.now() time)
 * for the waits of their own.
 */
export async function beforeCapture(driver: PageDriver, options: CaptureOptions, deadline: number): Promise<void> {
  if (options.waitForSelector) {
    // A second short of the capture's own time-out, so the job says which selector never came.
    const timeoutMs = Math.max(0, deadline - Date.now() - SELECTOR_WAIT_MARGIN_MS);
    const found = await evaluate(driver, waitForVisible, { selector: options.waitForSelector, timeoutMs });
    if (found === 'invalid') throw invalidSelector('wait_for_selector', options.waitForSelector);
    if (!found) throw selectorTimedOut(options.waitForSelector);
  }
  if (options.clickSelector) await click(driver, options.clickSelector);
  if (options.scripts) await runScript(driver, options.scripts);
  const style: StyleRequest = {
    css: options.styles ?? '',
    hide: options.hideSelectors ?? [],
    mask: options.maskSelectors ?? [],
    freezeMotion: options.reducedMotion === true,
  };
  if (style.css || style.hide.length || style.mask.length || style.freezeMotion) {
    const bad = await evaluate(driver, injectStyles, style);
    if (bad !== null) throw invalidSelector(style.hide.includes(bad) ? 'hide_selectors' : 'mask_selectors', bad);
  }
  if (options.delayMs) await sleep(Math.min(options.delayMs, Math.max(0, deadline - Date.now())));
}

const invalidSelector = (field: string, selector: string) => new CaptureError(`${field} is not a valid CSS selector: ${selector}`);

/** Clicks the first element matching `selector` at its centre, as a user would (trusted mouse events). */
async function click(driver: PageDriver, selector: string): Promise<void> {
  const point = await evaluate(driver, clickPoint, { selector });
  if (point === 'invalid') throw invalidSelector('click_selector', selector);
  if (point === null) throw noElementMatches(selector);
  const at = { x: point.x, y: point.y, button: 'left' as const, clickCount: 1 };
  await driver.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y });
  await driver.send('Input.dispatchMouseEvent', { type: 'mousePressed', ...at });
  await driver.send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...at });
  await sleep(AFTER_CLICK_MS);
}

/** Runs the request's script in the page's main world, awaiting a promise it returns. */
async function runScript(driver: PageDriver, source: string): Promise<void> {
  const { exceptionDetails } = await driver.send('Runtime.evaluate', {
    expression: source,
    awaitPromise: true,
    returnByValue: false,
    userGesture: true,
  });
  if (exceptionDetails) {
    const message = (exceptionDetails.exception?.description ?? exceptionDetails.text).split('\n')[0]!.slice(0, 300);
    throw new CaptureError(`The script failed: ${message}`);
  }
}

/** The rectangle of the first element matching `selector`, in CSS px of the page. */
export async function selectorClip(driver: PageDriver, selector: string): Promise<ClipRect> {
  const rect = await evaluate(driver, elementRect, { selector });
  if (rect === 'invalid') throw invalidSelector('selector', selector);
  if (rect === null) throw noElementMatches(selector);
  if (rect.width < 1 || rect.height < 1) throw new CaptureError(`The element matching ${selector} has no size to capture`);
  return rect;
}
