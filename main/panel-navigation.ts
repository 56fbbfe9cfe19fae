/** Path prefix of the control panel, served by the same server as the API. */
export const PANEL_PATH = '/admin/';

const parse = (url: string): URL | null => {
  try {
    return new URL(url);
  } catch {
    return null;
  }
};

/** The origin ("http://127.0.0.1:8080") of the panel's address. */
export function panelOrigin(adminUrl: string): string {
  const url = parse(adminUrl);
  if (!url) throw new Error(`Not a URL: ${adminUrl}`);
  return url.origin;
}

/**
 * Whether the panel window may navigate to `target`: only the panel itself, on the server's
 * origin under /admin/. Anything else (another site, the API, a file: or javascript: URL)
 * would run with the window's session and the admin cookie.
 */
export function isPanelNavigation(target: string, origin: string): boolean {
  const url = parse(target);
  if (!url || url.origin !== origin) return false;
  return url.pathname === '/admin' || url.pathname.startsWith(PANEL_PATH);
}

/** Whether `candidate` (a URL or an origin such as "http://127.0.0.1:8080/") is the panel's origin. */
export function isPanelOrigin(candidate: string, origin: string): boolean {
  return parse(candidate)?.origin === origin;
}

/** What happens to a link the panel opens in a new window (`target=_blank`, window.open). */
export type PopupDecision = 'child-window' | 'system-browser' | 'deny';

/**
 * Same-origin pages (a screenshot, a page's HTML) open in a locked-down child window that
 * shares the panel's session; other http(s) links go to the system browser, outside the app;
 * every other scheme is refused.
 */
export function popupDecision(target: string, origin: string): PopupDecision {
  const url = parse(target);
  if (!url) return 'deny';
  if (url.origin === origin) return 'child-window';
  if (url.protocol === 'http:' || url.protocol === 'https:') return 'system-browser';
  return 'deny';
}
