/**
 * History routing for the console's few pages. The service answers index.html for each of these
 * paths (src/console/routes.ts, CONSOLE_PAGES), so a reload or a shared link opens the same page.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'endpoints' }
  | { page: 'endpoint'; name: string }
  | { page: 'edit'; name: string }
  | { page: 'new' }
  | { page: 'sources' }
  | { page: 'source'; name: string }
  | { page: 'explorer'; name: string }
  | { page: 'alerts' }
  | { page: 'alert'; name: string }
  | { page: 'new-alert' };

export function parseRoute(pathname: string): Route {
  const [first, name, action] = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (first === 'new-endpoint') return { page: 'new' };
  if (first === 'sources' && name && action === 'search') return { page: 'explorer', name };
  if (first === 'new-alert') return { page: 'new-alert' };
  if (first === 'alerts') return name ? { page: 'alert', name } : { page: 'alerts' };
  if (first === 'sources') return name ? { page: 'source', name } : { page: 'sources' };
  if (first === 'endpoints' && name) return action === 'edit' ? { page: 'edit', name } : { page: 'endpoint', name };
  return { page: 'endpoints' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'endpoints':
      return '/endpoints';
    case 'endpoint':
      return `/endpoints/${encodeURIComponent(route.name)}`;
    case 'edit':
      return `/endpoints/${encodeURIComponent(route.name)}/edit`;
    case 'new':
      return '/new-endpoint';
    case 'sources':
      return '/sources';
    case 'source':
      return `/sources/${encodeURIComponent(route.name)}`;
    case 'explorer':
      return `/sources/${encodeURIComponent(route.name)}/search`;
    case 'alerts':
      return '/alerts';
    case 'alert':
      return `/alerts/${encodeURIComponent(route.name)}`;
    case 'new-alert':
      return '/new-alert';
  }
}

export function navigate(route: Route): void {
  history.pushState(null, '', href(route));
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  return route;
}

/** A link that routes in the page instead of loading it again. */
export function linkProps(route: Route) {
  return {
    href: href(route),
    onClick: (e: MouseEvent) => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(route);
    },
  };
}
