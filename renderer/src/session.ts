import { api, SESSION_PATH } from './api-client.js';

/**
 * Takes the admin token out of an address like `/admin/#token=…` and removes it from the address
 * bar and the history entry before anything else happens, so it cannot leak through a bookmark,
 * a screenshot of the window or the back button. Answers the token, or null when there is none.
 */
export function takeTokenFromFragment(loc: Location = location, hist: History = history): string | null {
  const match = /^#token=([^&]+)/.exec(loc.hash);
  if (!match) return null;
  hist.replaceState(null, '', `${loc.pathname}${loc.search}#/`);
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return null;
  }
}

/** Exchanges the admin token for the HttpOnly session cookie. */
export async function signIn(token: string): Promise<void> {
  await api<void>(SESSION_PATH, { method: 'POST', body: { token } });
}

export async function signOut(): Promise<void> {
  await api<void>(SESSION_PATH, { method: 'DELETE' });
}
