import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

// A few lines of history-API routing instead of a router library: the dashboard needs the path,
// the query string and links, nothing more.
const NAVIGATE = 'hostctl:navigate';

function subscribe(notify: () => void): () => void {
  window.addEventListener('popstate', notify);
  window.addEventListener(NAVIGATE, notify);
  return () => {
    window.removeEventListener('popstate', notify);
    window.removeEventListener(NAVIGATE, notify);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

/** The current path and query string; re-renders on navigation. */
export function useLocation(): { pathname: string; search: string } {
  const current = useSyncExternalStore(subscribe, snapshot);
  const queryAt = current.indexOf('?');
  return queryAt < 0
    ? { pathname: current, search: '' }
    : { pathname: current.slice(0, queryAt), search: current.slice(queryAt) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATE));
  if (!options.replace) window.scrollTo(0, 0);
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/** A real link (middle-click, copy address and screen readers work) that navigates in place. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={follow} {...rest} />;
}
