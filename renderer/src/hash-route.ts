import { useEffect, useState } from 'preact/hooks';

export type PageName = 'dashboard' | 'accounts' | 'keys' | 'jobs' | 'monitors' | 'settings';

export interface Route {
  page: PageName;
  params: URLSearchParams;
}

const PAGES: readonly PageName[] = ['dashboard', 'accounts', 'keys', 'jobs', 'monitors', 'settings'];

/** `#/jobs?status=failed` → { page: 'jobs', params: status=failed }; anything else is the dashboard. */
export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const page = (PAGES as readonly string[]).includes(path) ? (path as PageName) : 'dashboard';
  return { page, params: new URLSearchParams(search) };
}

export function routeHref(page: PageName, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return `#/${page}${s ? `?${s}` : ''}`;
}

export function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** Changes the query part of the current page's address without adding a history entry. */
export function replaceParams(page: PageName, params: Record<string, string | undefined>): void {
  history.replaceState(null, '', routeHref(page, params));
  dispatchEvent(new HashChangeEvent('hashchange'));
}
