/** A small client-side router: history API, same-origin links intercepted, the path matched against page patterns. */
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const current = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });
const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((l) => l());
  window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/** Clicks on same-origin links to app pages navigate in place. */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== window.location.origin) return;
    if (a.pathname.startsWith('/api/') || a.pathname.startsWith('/docs')) return;
    e.preventDefault();
    navigate(a.pathname + a.search + a.hash);
  });
}

export const LocationContext = createContext<Location>(current());
export const useLoc = () => useContext(LocationContext);
