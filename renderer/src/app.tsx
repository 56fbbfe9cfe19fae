import { useEffect, useRef, useState } from 'preact/hooks';

import type { Status } from './admin-types.js';
import { api, onUnauthorized } from './api-client.js';
import { ToastProvider } from './components/toasts.js';
import { type PageName, routeHref, useHashRoute } from './hash-route.js';
import { AccountsPage } from './pages/accounts-page.js';
import { DashboardPage } from './pages/dashboard-page.js';
import { JobsPage } from './pages/jobs-page.js';
import { KeysPage } from './pages/keys-page.js';
import { MonitorsPage } from './pages/monitors-page.js';
import { SettingsPage } from './pages/settings-page.js';
import { SignInPage } from './pages/sign-in-page.js';
import { signIn, signOut, takeTokenFromFragment } from './session.js';

const NAV: { page: PageName; label: string }[] = [
  { page: 'dashboard', label: 'Dashboard' },
  { page: 'accounts', label: 'Accounts' },
  { page: 'keys', label: 'API keys' },
  { page: 'jobs', label: 'Jobs' },
  { page: 'monitors', label: 'Monitors' },
  { page: 'settings', label: 'Settings' },
];

type Session = { state: 'checking' } | { state: 'signed-out'; problem: string | null } | { state: 'signed-in' };

/** Signs in with the token from the address (if any), then checks the session works. */
async function startSession(): Promise<Session> {
  const token = takeTokenFromFragment();
  try {
    if (token) await signIn(token);
    await api<Status>('/admin/api/status');
    return { state: 'signed-in' };
  } catch (err) {
    const problem = token ? 'The token in the address was not accepted. Paste the current one from the admin-token file.' : null;
    return { state: 'signed-out', problem: (err as { status?: number }).status === 401 ? problem : (err as Error).message };
  }
}

export function App() {
  const [session, setSession] = useState<Session>({ state: 'checking' });
  useEffect(() => {
    void startSession().then(setSession);
    return onUnauthorized(() => setSession({ state: 'signed-out', problem: 'The session ended. Sign in again.' }));
  }, []);

  if (session.state === 'checking') {
    return (
      <main class="sign-in" id="main">
        <p class="loading">Opening the control panel…</p>
      </main>
    );
  }
  if (session.state === 'signed-out') {
    return <SignInPage problem={session.problem} onSignedIn={() => setSession({ state: 'signed-in' })} />;
  }
  return (
    <ToastProvider>
      <Shell onSignOut={() => setSession({ state: 'signed-out', problem: null })} />
    </ToastProvider>
  );
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useHashRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After a page change, move focus to its title so screen readers announce where the user is.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route.page]);

  useEffect(() => {
    const label = NAV.find((n) => n.page === route.page)?.label;
    document.title = `${label} — Screenshot Appliance`;
  }, [route.page]);

  // On a narrow screen the navigation folds behind the menu button; choosing a page folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  useEffect(() => setMenuOpen(false), [route.page]);
  const onNavKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !menuOpen) return;
    setMenuOpen(false);
    menuButton.current?.focus();
  };

  const leave = async () => {
    try {
      await signOut();
    } finally {
      onSignOut();
    }
  };

  return (
    <div class="shell">
      <button type="button" class="skip-link" onClick={() => main.current?.querySelector<HTMLElement>('h1')?.focus()}>
        Skip to content
      </button>
      <nav class="sidebar" aria-label="Control panel" data-open={menuOpen ? 'true' : 'false'} onKeyDown={onNavKeyDown}>
        <div class="brand">
          <svg viewBox="0 0 16 16" width="22" height="22" aria-hidden="true">
            <rect x="1" y="3" width="14" height="10" rx="2" fill="currentColor" />
            <circle cx="8" cy="8" r="3" fill="var(--sidebar-bg)" />
          </svg>
          <span>Screenshot Appliance</span>
        </div>
        {/* Shown only on narrow screens, where the links fold away behind it. */}
        <button type="button" class="menu-button" ref={menuButton} aria-expanded={menuOpen} aria-controls="nav-items" onClick={() => setMenuOpen((o) => !o)}>
          <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true">
            <path d="M2 4h12M2 8h12M2 12h12" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" />
          </svg>
          Menu
        </button>
        <div id="nav-items" class="nav-items">
          <ul>
            {NAV.map((n) => (
              <li key={n.page}>
                <a href={routeHref(n.page)} aria-current={route.page === n.page ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
          <button type="button" class="sign-out" onClick={leave}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="main" ref={main} class="content">
        {route.page === 'dashboard' && <DashboardPage />}
        {route.page === 'accounts' && <AccountsPage />}
        {route.page === 'keys' && <KeysPage params={route.params} />}
        {route.page === 'jobs' && <JobsPage params={route.params} />}
        {route.page === 'monitors' && <MonitorsPage params={route.params} />}
        {route.page === 'settings' && <SettingsPage />}
      </main>
    </div>
  );
}
