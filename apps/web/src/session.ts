import { useQuery } from '@tanstack/react-query';
import { api } from './api/client.ts';
import { type Me, ProblemError } from '@hostctl/api-client';

export const ME_KEY = ['me'] as const;

/**
 * The signed-in user, or null when signed out (401). Every screen reads this one query: the API
 * decides the role and customer, the dashboard only hides what the API would refuse.
 */
export function useMe() {
  return useQuery({
    queryKey: ME_KEY,
    queryFn: async (): Promise<Me | null> => {
      const { data, error, response } = await api.GET('/api/auth/me');
      if (response.status === 401) return null;
      if (!response.ok || !data) throw ProblemError.from(response.status, error);
      return data;
    },
    staleTime: 60_000,
  });
}

/** The sign-in address that brings the browser back to `path` afterwards. */
export function signInHref(path: string): string {
  const back = path.startsWith('/') && !path.startsWith('//') && !path.startsWith('/signed-out') ? path : '/';
  return `/api/auth/login?redirect=${encodeURIComponent(back)}`;
}
