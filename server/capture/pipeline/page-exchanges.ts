import { listen, type PageDriver } from './page-driver.js';

/**
 * The bounds of what an evidence capture records (evidence: true). A page is hostile input: it
 * may load thousands of requests or a gigabyte of video. Past the bounds an exchange is still
 * recorded without its body (its WARC record says so), or, past MAX_EXCHANGES, not at all.
 */
export const EXCHANGE_BOUNDS = {
  /** HTTP exchanges recorded at most (redirect hops count one each). */
  maxExchanges: 1_000,
  /** Bytes of one response body kept at most; Chromium keeps no larger body for the session. */
  maxBodyBytes: 10 * 1024 * 1024,
  /** Bytes of all response bodies kept at most (Chromium's buffer for the session, and what the bundle holds). */
  maxTotalBodyBytes: 50 * 1024 * 1024,
} as const;

/** Request headers that carry credentials or cookies: never recorded, whatever their value. */
const SECRET_REQUEST_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
/** Response headers that carry cookies: never recorded. */
const SECRET_RESPONSE_HEADERS = new Set(['set-cookie', 'set-cookie2']);

/** One HTTP request the page made and the response it got, as the browser saw them. */
export interface RecordedExchange {
  url: string;
  method: string;
  /** The request's headers, without credentials, cookies or the capture's own `headers`. */
  requestHeaders: Record<string, string>;
  /** The request's body (a form or a fetch's POST), when Chromium gave it. */
  requestBody: string | null;
  status: number;
  statusText: string;
  /** The response's headers, without cookies. */
  responseHeaders: Record<string, string>;
  /** `http/1.1`, `h2`… as Chromium names it. */
  protocol: string;
  /** The body as the page received it (decoded), or null when it was not kept (a redirect, past the bounds, a failure). */
  body: Buffer | null;
  /** Why the body is missing when it should be there: `too large`, `unavailable`. */
  bodyMissing?: string;
  /** When the request was sent (ms since the epoch, the browser's wall clock). */
  sentAt: number;
}

interface Pending {
  url: string;
  method: string;
  requestHeaders: Record<string, string>;
  requestBody: string | null;
  sentAt: number;
  response?: { status: number; statusText: string; headers: Record<string, string>; protocol: string };
}

/**
 * Records every HTTP exchange of one page for its evidence bundle, from CDP's Network events:
 * the request as sent, the response as received and, once loaded, its body
 * (`Network.getResponseBody`), within EXCHANGE_BOUNDS. The page's Network domain must be
 * enabled with buffers for bodies (preparePage with `keepBodies`). Headers that carry secrets
 * (credentials, cookies, the names of the capture's `headers`) are dropped as they are read,
 * so they never reach a record.
 */
export class PageExchanges {
  private readonly pending = new Map<string, Pending>();
  private readonly recorded: RecordedExchange[] = [];
  private readonly bodyReads: Array<Promise<void>> = [];
  private bodyBytes = 0;
  private readonly detach: () => void;

  constructor(
    private readonly driver: PageDriver,
    /** The names (any case) of the capture's own request headers, which are secrets. */
    secretHeaderNames: readonly string[] = [],
  ) {
    const secretNames = new Set([...SECRET_REQUEST_HEADERS, ...secretHeaderNames.map((name) => name.toLowerCase())]);
    this.detach = listen(driver, {
      'Network.requestWillBeSent': ({ requestId, request, redirectResponse, wallTime }) => {
        // data: and blob: addresses are part of what holds them (the HTML, a script), not exchanges.
        if (!/^https?:/i.test(request.url)) return;
        const before = this.pending.get(requestId);
        // A redirect: the hop before ends with the redirect's response, and has no body.
        if (before && redirectResponse) this.keep({ ...before, response: responseOf(redirectResponse) }, null);
        this.pending.set(requestId, {
          url: request.url,
          method: request.method ?? 'GET',
          requestHeaders: without(request.headers ?? {}, secretNames),
          requestBody: request.postData ?? null,
          sentAt: wallTime ? Math.round(wallTime * 1000) : Date.now(),
        });
      },
      'Network.responseReceived': ({ requestId, response }) => {
        const request = this.pending.get(requestId);
        if (request) request.response = responseOf(response);
      },
      'Network.loadingFinished': ({ requestId }) => {
        const request = this.pending.get(requestId);
        this.pending.delete(requestId);
        if (request?.response) this.bodyReads.push(this.readBody(requestId, request));
      },
      'Network.loadingFailed': ({ requestId }) => {
        this.pending.delete(requestId);
      },
    });
  }

  /** The exchanges recorded, once the bodies asked for have come (or failed); stops recording. */
  async finish(): Promise<RecordedExchange[]> {
    this.detach();
    await Promise.all(this.bodyReads);
    return [...this.recorded].sort((a, b) => a.sentAt - b.sentAt);
  }

  dispose(): void {
    this.detach();
  }

  private async readBody(requestId: string, request: Pending): Promise<void> {
    if (this.recorded.length >= EXCHANGE_BOUNDS.maxExchanges) return;
    const index = this.keep(request, null);
    try {
      const { body, base64Encoded } = await this.driver.send('Network.getResponseBody', { requestId });
      const bytes = Buffer.from(body, base64Encoded ? 'base64' : 'utf8');
      if (bytes.length > EXCHANGE_BOUNDS.maxBodyBytes || this.bodyBytes + bytes.length > EXCHANGE_BOUNDS.maxTotalBodyBytes) {
        this.recorded[index]!.bodyMissing = 'too large';
        return;
      }
      this.bodyBytes += bytes.length;
      this.recorded[index]!.body = bytes;
    } catch {
      // Chromium keeps no body past its buffers (EXCHANGE_BOUNDS), nor one of a page gone.
      this.recorded[index]!.bodyMissing = 'unavailable';
    }
  }

  /** Adds an exchange within the bound; returns its index. */
  private keep(request: Pending, body: Buffer | null): number {
    if (this.recorded.length >= EXCHANGE_BOUNDS.maxExchanges) return -1;
    const response = request.response!;
    this.recorded.push({
      url: request.url,
      method: request.method,
      requestHeaders: request.requestHeaders,
      requestBody: request.requestBody,
      status: response.status,
      statusText: response.statusText,
      responseHeaders: without(response.headers, SECRET_RESPONSE_HEADERS),
      protocol: response.protocol,
      body,
      sentAt: request.sentAt,
    });
    return this.recorded.length - 1;
  }
}

function responseOf(response: { status: number; statusText?: string; headers: Record<string, string>; protocol?: string }) {
  return { status: response.status, statusText: response.statusText ?? '', headers: response.headers, protocol: response.protocol ?? 'http/1.1' };
}

function without(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!names.has(name.toLowerCase())) kept[name] = value;
  return kept;
}
