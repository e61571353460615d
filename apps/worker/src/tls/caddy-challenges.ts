import type { ChallengeHttp } from './acme-client.js';
import { createCaddyAdmin } from '../adapters/caddy-admin.js';

export interface CaddyChallengeOptions {
  adminUrl: string;
  serverName: string;
  instance: string;
  now?: () => Date;
}

export interface SweepOptions {
  /** A route younger than this may belong to an order still running somewhere: kept. */
  olderThanMs: number;
  /** Whether an order for this domain runs now, on any replica (its advisory lock is held). */
  inFlight: (domain: string) => Promise<boolean>;
}

export interface CaddyChallenges extends ChallengeHttp {
  /** Removes the challenge routes of this installation that outlived their order; answers their @ids. */
  sweep(options: SweepOptions): Promise<string[]>;
}

const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

interface CaddyRoute {
  '@id'?: unknown;
  match?: { host?: unknown }[];
}

/**
 * http-01 answers served by Caddy (RFC 8555 §8.3): for the order's lifetime, a route of its own at
 * the front of the routes' server matches exactly the domain and `/.well-known/acme-challenge/<token>`
 * and answers the key authorization, ahead of the service's own route (and of its HTTPS redirect).
 * The ACME client removes it in a `finally`; its `@id` carries the installation, the time it was
 * added (milliseconds) and the token, so that the sweep can tell a leftover of a worker killed
 * mid-order (the `finally` never ran) from the route of an order still running.
 */
export function createCaddyChallenges(options: CaddyChallengeOptions): CaddyChallenges {
  const caddy = createCaddyAdmin(options.adminUrl);
  const now = options.now ?? (() => new Date());
  const routes = `/config/apps/http/servers/${encodeURIComponent(options.serverName)}/routes`;
  const prefix = `hostctl-acme-${options.instance}-`;
  // The routes this process added and has not removed yet: its own orders, never swept.
  const mine = new Map<string, string>();
  return {
    async add(domain, token, keyAuthorization) {
      const previous = mine.get(token);
      if (previous !== undefined) await caddy.removeId(previous);
      const id = challengeRouteId(options.instance, token, now());
      mine.set(token, id);
      await caddy.must('PUT', `${routes}/0`, {
        '@id': id,
        match: [{ host: [domain], path: [`${ACME_CHALLENGE_PATH}${token}`] }],
        handle: [
          {
            handler: 'static_response',
            status_code: 200,
            headers: { 'Content-Type': ['application/octet-stream'] },
            body: keyAuthorization,
          },
        ],
        terminal: true,
      });
    },
    async remove(_domain, token) {
      const id = mine.get(token);
      if (id === undefined) return;
      await caddy.removeId(id);
      mine.delete(token);
    },
    async sweep(sweep) {
      const current = (await caddy.json<CaddyRoute[]>(routes)) ?? [];
      const ours = new Set(mine.values());
      const removed: string[] = [];
      for (const route of current) {
        const id = route['@id'];
        if (typeof id !== 'string' || !id.startsWith(prefix) || ours.has(id)) continue;
        // No time right after the prefix: another installation whose QUEUE_PREFIX starts with ours
        // ("foo-bar" for "foo"), or a route from before the sweep existed; neither is ours to judge.
        const addedAt = addedAtOf(id.slice(prefix.length));
        if (addedAt === null || now().getTime() - addedAt < sweep.olderThanMs) continue;
        const domain = hostOf(route);
        if (domain !== null && (await sweep.inFlight(domain))) continue;
        await caddy.removeId(id);
        removed.push(id);
      }
      return removed;
    },
  };
}

/** `hostctl-acme-<instance>-<added at, ms>-<token>` (tokens are base64url: they may hold '-'). */
export function challengeRouteId(instance: string, token: string, addedAt: Date): string {
  return `hostctl-acme-${instance}-${addedAt.getTime()}-${token}`;
}

function addedAtOf(rest: string): number | null {
  const match = /^(\d{13})-./.exec(rest);
  return match?.[1] ? Number(match[1]) : null;
}

function hostOf(route: CaddyRoute): string | null {
  const host = route.match?.[0]?.host;
  return Array.isArray(host) && typeof host[0] === 'string' ? host[0] : null;
}
