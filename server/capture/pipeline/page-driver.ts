import { answerTooLarge, checkAnswerSize, EVALUATE_ANSWER_MAX_CHARS, isOversizedAnswer, OVERSIZED_ANSWER } from './answer-bounds.js';

// The seam between the capture pipeline and a browser: a Chrome DevTools Protocol session
// attached to one page. Playwright's CDPSession (ChromiumEngine) and Electron's
// `webContents.debugger` (ElectronEngine) both are one, so the pipeline is written once.

/** A CDP Network.Response, as much of it as the pipeline reads. */
interface CdpResponse {
  url: string;
  status: number;
  statusText?: string;
  /** Names as the server sent them; repeated fields joined by newlines. */
  headers: Record<string, string>;
  /** `http/1.1`, `h2`… */
  protocol?: string;
}

/** The commands the pipeline sends, with the parts of their parameters and results it uses. */
export interface CdpCommands {
  'Page.enable': { params: Record<string, never>; result: object };
  'Page.getFrameTree': { params: Record<string, never>; result: { frameTree: { frame: { id: string } } } };
  'Page.addScriptToEvaluateOnNewDocument': {
    params: { source: string; worldName?: string; runImmediately?: boolean };
    result: { identifier: string };
  };
  'Page.navigate': {
    params: { url: string };
    /** `isDownload`: the address answered with a file to download (Chromium 126 and later). */
    result: { frameId: string; loaderId?: string; errorText?: string; isDownload?: boolean };
  };
  'Page.captureScreenshot': {
    params: {
      format: 'png';
      optimizeForSpeed: boolean;
      captureBeyondViewport: boolean;
      clip: { x: number; y: number; width: number; height: number; scale: number };
    };
    result: { data: string };
  };
  'Page.printToPDF': {
    params: {
      printBackground?: boolean;
      paperWidth?: number;
      paperHeight?: number;
      marginTop?: number;
      marginBottom?: number;
      marginLeft?: number;
      marginRight?: number;
      preferCSSPageSize?: boolean;
      /** ReturnAsStream: the PDF is read with IO.read from the stream answered. */
      transferMode?: 'ReturnAsBase64' | 'ReturnAsStream';
    };
    result: { data: string; stream: string };
  };
  /** Reads up to `size` bytes of a stream the browser holds; `eof` once it has all been read. */
  'IO.read': { params: { handle: string; size?: number }; result: { data: string; base64Encoded?: boolean; eof: boolean } };
  'IO.close': { params: { handle: string }; result: object };
  'Network.enable': { params: { maxTotalBufferSize?: number; maxResourceBufferSize?: number }; result: object };
  /**
   * Patterns with `*` wildcards (`urls`), or URLPattern strings (`urlPatterns`, Chromium 138 and
   * later); a matching sub-request fails with net::ERR_BLOCKED_BY_CLIENT.
   */
  /** A loaded response's body, from the session's buffer (Network.enable's sizes); an error when it was not kept. */
  'Network.getResponseBody': { params: { requestId: string }; result: { body: string; base64Encoded: boolean } };
  'Network.setBlockedURLs': { params: { urls?: string[]; urlPatterns?: Array<{ urlPattern: string; block: boolean }> }; result: object };
  'Network.setCookies': {
    params: {
      cookies: Array<{
        name: string;
        value: string;
        url?: string;
        domain?: string;
        path?: string;
        secure?: boolean;
        httpOnly?: boolean;
        sameSite?: 'Strict' | 'Lax' | 'None';
        expires?: number;
      }>;
    };
    result: object;
  };
  /** The cookies of the page's browser context (a saved login keeps them as its session). */
  'Network.getAllCookies': {
    params: Record<string, never>;
    result: {
      cookies: Array<{ name: string; value: string; domain: string; path: string; expires: number; httpOnly: boolean; secure: boolean; session: boolean; sameSite?: 'Strict' | 'Lax' | 'None' }>;
    };
  };
  'Network.setUserAgentOverride': { params: { userAgent: string; acceptLanguage?: string }; result: object };
  'Fetch.enable': {
    params: { patterns: Array<{ urlPattern?: string; resourceType?: string; requestStage?: 'Request' | 'Response' }>; handleAuthRequests?: boolean };
    result: object;
  };
  'Fetch.disable': { params: Record<string, never>; result: object };
  'Fetch.fulfillRequest': {
    params: { requestId: string; responseCode: number; responseHeaders?: Array<{ name: string; value: string }>; body?: string };
    result: object;
  };
  'Fetch.continueRequest': { params: { requestId: string; headers?: Array<{ name: string; value: string }> }; result: object };
  /** Fails a paused request as Chromium's own blocking would (net::ERR_BLOCKED_BY_CLIENT for BlockedByClient). */
  'Fetch.failRequest': { params: { requestId: string; errorReason: 'BlockedByClient' | 'Aborted' }; result: object };
  'Emulation.setEmulatedMedia': { params: { media?: string; features?: Array<{ name: string; value: string }> }; result: object };
  'Emulation.setTimezoneOverride': { params: { timezoneId: string }; result: object };
  'Emulation.setLocaleOverride': { params: { locale?: string }; result: object };
  'Emulation.setDefaultBackgroundColorOverride': { params: { color?: { r: number; g: number; b: number; a?: number } }; result: object };
  'Input.dispatchMouseEvent': {
    params: { type: 'mousePressed' | 'mouseReleased' | 'mouseMoved'; x: number; y: number; button?: 'left' | 'none'; clickCount?: number };
    result: object;
  };
  'Runtime.evaluate': {
    params: { expression: string; awaitPromise: boolean; returnByValue: boolean; userGesture?: boolean; contextId?: number };
    result: { result: { value?: unknown }; exceptionDetails?: { text: string; exception?: { description?: string } } };
  };
  /** A function `name(payload: string)` in every document's main world, reported as Runtime.bindingCalled. */
  'Runtime.addBinding': { params: { name: string }; result: object };
  /** Needed for Runtime.addBinding's functions to be installed and reported. */
  'Runtime.enable': { params: Record<string, never>; result: object };
  'DOM.getDocument': { params: { depth: number }; result: { root: { nodeId: number } } };
  'DOM.getOuterHTML': { params: { nodeId: number }; result: { outerHTML: string } };
}

/** The events the pipeline listens to, with the parts it reads. */
export interface CdpEvents {
  /** A document committed in a frame; the main frame has no `parentId`. */
  'Page.frameNavigated': { frame: { id: string; parentId?: string } };
  /** The main frame's document fired DOMContentLoaded. */
  'Page.domContentEventFired': object;
  /** The main frame's document fired `load`. */
  'Page.loadEventFired': object;
  'Page.downloadWillBegin': { frameId: string };
  /**
   * Also sent again, same `requestId`, for each redirect the request follows. `documentURL`: the
   * address of the document (or worker) the request is made for.
   */
  'Network.requestWillBeSent': {
    requestId: string;
    frameId?: string;
    type?: string;
    documentURL?: string;
    /** What started the request: `parser`, `script`, … or `other` (the browser itself, for one). */
    initiator?: { type: string };
    request: { url: string; method?: string; headers?: Record<string, string>; postData?: string };
    /** The response of the hop before, when this is a redirect's next request. */
    redirectResponse?: CdpResponse;
    /** When it was sent, seconds since the epoch. */
    wallTime?: number;
  };
  'Network.responseReceived': { requestId: string; response: CdpResponse };
  /**
   * The headers as they came over the wire, for every response; the only event of a response
   * that CORS then refuses to the page (a cross-origin fetch), which gets no responseReceived.
   */
  'Network.responseReceivedExtraInfo': { requestId: string; headers: Record<string, string> };
  'Network.loadingFinished': { requestId: string };
  'Network.loadingFailed': { requestId: string; errorText: string };
  /** A request paused by Fetch.enable's patterns, to be continued (Fetch.continueRequest). */
  'Fetch.requestPaused': { requestId: string; request: { url: string; headers: Record<string, string> }; resourceType: string; frameId: string };
  /** The page called a function added with Runtime.addBinding. */
  'Runtime.bindingCalled': { name: string; payload: string; executionContextId: number };
  /** A console call (Runtime.enable): `type` is `log`, `error`, `assert`…; `args` its arguments, previewed. */
  'Runtime.consoleAPICalled': { type: string; args: Array<{ value?: unknown; description?: string }> };
  /** An exception no script caught (Runtime.enable). */
  'Runtime.exceptionThrown': { exceptionDetails: { text: string; exception?: { description?: string } } };
}

export type CdpEventHandler<E extends keyof CdpEvents> = (params: CdpEvents[E]) => void;

/**
 * One page as the capture pipeline drives it: CDP commands and events of a session attached to
 * the page, following it through navigations and renderer swaps. Creating the page, emulating
 * its device and disposing of it are the engine's; the pipeline only speaks CDP.
 */
export interface PageDriver {
  send<M extends keyof CdpCommands>(method: M, params?: CdpCommands[M]['params']): Promise<CdpCommands[M]['result']>;
  on<E extends keyof CdpEvents>(event: E, handler: CdpEventHandler<E>): void;
  off<E extends keyof CdpEvents>(event: E, handler: CdpEventHandler<E>): void;
}

/** Handlers for several events at once (listen()). */
export type CdpEventHandlers = { [E in keyof CdpEvents]?: CdpEventHandler<E> };

/** Listens to the events `handlers` names; returns a function that stops listening to all of them. */
export function listen(driver: PageDriver, handlers: CdpEventHandlers): () => void {
  const entries = Object.entries(handlers) as Array<[keyof CdpEvents, CdpEventHandler<keyof CdpEvents>]>;
  for (const [event, handler] of entries) driver.on(event, handler);
  return () => {
    for (const [event, handler] of entries) driver.off(event, handler);
  };
}

/**
 * Runs a self-contained function (page-scripts.ts) in the page's main world and returns its
 * result, awaited. The main world, because what the page's own scripts did decides whether to
 * scroll (watchLazyLoading marks its window).
 */
export function evaluate<A, R>(driver: PageDriver, fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  return evaluateCall<R>(driver, `(${fn.toString()})`, arg);
}

/**
 * Calls the function `callee` evaluates to with `arg` in the page's main world, awaited, and
 * returns its answer, measured in the page first: an answer over EVALUATE_ANSWER_MAX_CHARS
 * fails the call saying the page made it too large. A script that throws throws its description.
 */
export async function evaluateCall<R>(driver: PageDriver, callee: string, arg: unknown): Promise<R> {
  const bound = `${JSON.stringify(EVALUATE_ANSWER_MAX_CHARS)}, ${JSON.stringify(OVERSIZED_ANSWER)}`;
  const { result, exceptionDetails } = await driver.send('Runtime.evaluate', {
    expression: `(async () => { const answer = await ${callee}(${JSON.stringify(arg)}); (${checkAnswerSize.toString()})(answer, ${bound}); return answer; })()`,
    awaitPromise: true,
    returnByValue: true,
  });
  if (exceptionDetails) {
    const error = new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    throw isOversizedAnswer(error) ? answerTooLarge('Runtime.evaluate') : error;
  }
  return result.value as R;
}
