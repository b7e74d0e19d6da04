import type { ComponentChildren } from 'preact';
import { useApp } from '../app-state.js';
import { BASE, Link, useLocation } from '../router.js';

const NAV = [
  { href: BASE, label: 'Overview', section: (path: string) => path === BASE },
  { href: `${BASE}/stores`, label: 'Stores', section: (path: string) => path.startsWith(`${BASE}/stores`) },
  { href: `${BASE}/conversions`, label: 'Conversions', section: (path: string) => path.startsWith(`${BASE}/conversions`) },
  { href: `${BASE}/channels`, label: 'Channels', section: (path: string) => path === `${BASE}/channels` },
  { href: `${BASE}/customers`, label: 'Customers', section: (path: string) => path === `${BASE}/customers` },
  { href: `${BASE}/match-quality`, label: 'Match quality', section: (path: string) => path === `${BASE}/match-quality` },
  { href: `${BASE}/reconciliation`, label: 'Reconciliation', section: (path: string) => path === `${BASE}/reconciliation` },
  { href: `${BASE}/webhooks`, label: 'Webhooks', section: (path: string) => path === `${BASE}/webhooks` },
  { href: `${BASE}/settings/api-keys`, label: 'Settings', section: (path: string) => path.startsWith(`${BASE}/settings`) },
];

/** Header (navigation, Test mode switch, account), then the page. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { session, mode, setMode, signOut } = useApp();
  const { path } = useLocation();
  const inSettings = path.startsWith(`${BASE}/settings`);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={mode === 'test' ? 'top test' : 'top'}>
        <div class="bar">
          <Link href={BASE} class="brand">
            Waytrack
          </Link>
          <nav aria-label="Main">
            <ul>
              {NAV.map((item) => (
                <li key={item.href}>
                  <Link href={item.href} aria-current={item.section(path) ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div class="account">
            <label class="switch">
              <input
                type="checkbox"
                role="switch"
                checked={mode === 'test'}
                aria-checked={mode === 'test'}
                onChange={(e) => setMode(e.currentTarget.checked ? 'test' : 'live')}
              />
              <span>Test mode</span>
            </label>
            <span class="email" title={session.email}>
              {session.email}
            </span>
            <button type="button" class="secondary" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </div>
        {inSettings && (
          <nav aria-label="Settings" class="subnav">
            <ul>
              <li>
                <Link href={`${BASE}/settings/api-keys`} aria-current={path === `${BASE}/settings/api-keys` ? 'page' : undefined}>
                  API keys
                </Link>
              </li>
            </ul>
          </nav>
        )}
        {mode === 'test' && (
          <p class="mode-banner">Test mode: you are looking at test data, recorded with wt_test_ keys. Live data is not shown.</p>
        )}
      </header>
      <main id="main">{children}</main>
    </>
  );
}
