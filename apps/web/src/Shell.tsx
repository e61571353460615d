import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api } from './api/client.ts';
import { must, type Me } from '@hostctl/api-client';
import { ProblemAlert } from './components/feedback.tsx';
import { navFor } from './navigation.ts';
import type { Route } from './routes.ts';
import { Link, navigate } from './router.tsx';
import { ME_KEY } from './session.ts';
import { currentTheme, setTheme, type Theme } from './theme.ts';

/** The frame of every signed-in screen: header with the main navigation, the user and the theme. */
export function Shell({ me, route, children }: { me: Me; route: Route; children: ReactNode }) {
  const queries = useQueryClient();
  const [theme, setThemeState] = useState<Theme>(currentTheme);
  const signOut = useMutation({
    mutationFn: () => must(api.POST('/api/auth/logout')),
    onSuccess: (result) => {
      queries.clear();
      // The provider's own session ends too when it offers an end-session address.
      if (result.logout_url) window.location.assign(result.logout_url);
      else {
        queries.setQueryData(ME_KEY, null);
        navigate('/signed-out');
      }
    },
  });
  const toggleTheme = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    setTheme(next);
    setThemeState(next);
  };

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand" aria-label="hostctl home">
          hostctl
        </Link>
        <nav aria-label="Main">
          <ul>
            {navFor(me).map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={item.screens.includes(route.screen) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span className="muted" title={me.email}>
            {me.name} · {me.role}
            {me.customer_id ? ` · ${me.customer_id}` : ''}
          </span>
          <button type="button" className="ghost" onClick={toggleTheme} aria-pressed={theme === 'dark'}>
            Dark theme
          </button>
          <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <ProblemAlert error={signOut.error} />
        {children}
      </main>
    </>
  );
}
