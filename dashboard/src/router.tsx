// A small router over the History API: every page has its own URL under /dashboard, links
// change it without reloading, and back/forward and reloads land on the same page (the server
// answers every /dashboard path with the app).
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useReducer } from 'preact/hooks';

export const BASE = '/dashboard';

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener('popstate', notify);

/** Goes to `to` (a path under /dashboard, with its query string if any). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (`${location.pathname}${location.search}` === to) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  notify();
}

/** Counts location changes; every component that reads the location renders again on one. */
const LocationContext = createContext(0);

/**
 * Listens to the location once, at the root, mounted before any page: a page that navigates
 * as soon as it is shown is always heard.
 */
export function LocationProvider({ children }: { children: ComponentChildren }) {
  const [version, changed] = useReducer<number, void>((n) => n + 1, 0);
  useEffect(() => {
    listeners.add(changed);
    return () => {
      listeners.delete(changed);
    };
  }, []);
  return <LocationContext.Provider value={version}>{children}</LocationContext.Provider>;
}

/** The current path and query; the component renders again whenever either changes. */
export function useLocation(): { path: string; query: URLSearchParams } {
  useContext(LocationContext);
  const path = location.pathname.replace(/\/+$/, '') || BASE;
  return { path, query: new URLSearchParams(location.search) };
}

/** Sends the browser on to `to` (an old or short address), replacing the one it asked for. */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** Replaces the query string (filters, pickers): the page stays reload-safe, history stays short. */
export function setQuery(values: Record<string, string | undefined>): void {
  const params = new URLSearchParams(location.search);
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === '') params.delete(name);
    else params.set(name, value);
  }
  const search = params.toString();
  navigate(`${location.pathname}${search ? `?${search}` : ''}`, { replace: true });
}

/** `/dashboard/stores/:id` against a path → `{ id }`, or null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const source = pattern.replace(/:([a-zA-Z]+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const found = new RegExp(`^${source}$`).exec(path);
  if (!found) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] as string)]));
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children: ComponentChildren };

/** An ordinary link (it opens in a new tab as usual) that navigates in place on a plain click. */
export function Link({ href, onClick, ...props }: LinkProps) {
  return (
    <a
      href={href}
      onClick={(event) => {
        onClick?.(event);
        const modified = event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || event.button !== 0;
        if (event.defaultPrevented || modified) return;
        event.preventDefault();
        navigate(href);
      }}
      {...props}
    />
  );
}
