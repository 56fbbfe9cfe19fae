import type { CaptureOptions } from '../capture-options.js';
import type { CaptureRequest } from '../engine.js';
import { listen, type PageDriver } from '../pipeline/page-driver.js';

// `html`: a document rendered as the page. The page is navigated to the document's address
// (`base_url`, or HTML_PLACEHOLDER_URL) as to any page, and that one navigation request is
// answered with the document from here (CDP Fetch.fulfillRequest) instead of going out. So the
// document has that address's origin, its relative addresses resolve against it, and every
// request it makes (images, fetch, frames, a later navigation, the address itself again) leaves
// the browser as a page's would: through the egress proxy, which decides it. The document can
// reach nothing a page at that address could not.

/** What a job made from `html` shows as its `url`; its `final_url` is the address it was rendered at. */
export const HTML_JOB_URL = 'about:html';

/** Where a document without `base_url` is rendered: a host no DNS answers (RFC 6761), so its relative addresses load nothing. */
export const HTML_PLACEHOLDER_URL = 'http://html.invalid/';

/** The request with its `url` the document's address when it renders `html`; as it is otherwise. */
export function atDocumentAddress(request: CaptureRequest): CaptureRequest {
  const html = request.options?.html;
  return html ? { ...request, url: html.baseUrl ?? HTML_PLACEHOLDER_URL } : request;
}

/** Fetch's wildcards (`*`, `?`) and its escape character, escaped. */
const literalPattern = (url: string) => url.replace(/[\\*?]/g, (c) => `\\${c}`);

/**
 * Answers the main frame's first request for `url` with the document of `options.html`; does
 * nothing when there is none. Run before the other steps that pause requests (the headers of
 * option-steps.ts, request-blocking.ts): their Fetch patterns, set after this one, replace it
 * with patterns that include `url`, and this listener, registered first, answers the document's
 * request before they would continue it. Any later request for `url` is continued here only when
 * no other step pauses requests; otherwise theirs continues it.
 */
export async function serveDocument(driver: PageDriver, url: string, options: CaptureOptions): Promise<void> {
  const html = options.html;
  if (!html) return;
  const othersPause = Boolean(options.headers || options.httpAuth || options.blockAds || options.blockTrackers);
  let served = false;
  const body = Buffer.from(html.document, 'utf8').toString('base64');
  listen(driver, {
    'Fetch.requestPaused': ({ requestId, request, resourceType }) => {
      if (request.url !== url) return;
      if (!served && resourceType === 'Document') {
        served = true;
        const responseHeaders = [
          { name: 'Content-Type', value: 'text/html; charset=utf-8' },
          { name: 'Cache-Control', value: 'no-store' },
        ];
        driver.send('Fetch.fulfillRequest', { requestId, responseCode: 200, responseHeaders, body }).catch(() => undefined);
      } else if (!othersPause) {
        driver.send('Fetch.continueRequest', { requestId }).catch(() => undefined);
      }
    },
  });
  await driver.send('Fetch.enable', { patterns: [{ urlPattern: literalPattern(url), requestStage: 'Request' }] });
}
