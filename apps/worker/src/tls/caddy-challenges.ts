import type { ChallengeHttp } from './acme-client.js';
import { createCaddyAdmin } from './caddy-admin.js';

export interface CaddyChallengeOptions {
  adminUrl: string;
  serverName: string;
  instance: string;
}

const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

/**
 * http-01 answers served by Caddy (RFC 8555 §8.3): for the order's lifetime, a route of its own at
 * the front of the routes' server matches exactly the domain and `/.well-known/acme-challenge/<token>`
 * and answers the key authorization, ahead of the service's own route (and of its HTTPS redirect).
 * The ACME client removes it in a `finally`; its `@id` carries the installation and the token.
 */
export function createCaddyChallenges(options: CaddyChallengeOptions): ChallengeHttp {
  const caddy = createCaddyAdmin(options.adminUrl);
  const routes = `/config/apps/http/servers/${encodeURIComponent(options.serverName)}/routes`;
  const id = (token: string) => `hostctl-acme-${options.instance}-${token}`;
  return {
    async add(domain, token, keyAuthorization) {
      await caddy.removeId(id(token));
      await caddy.must('PUT', `${routes}/0`, {
        '@id': id(token),
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
      await caddy.removeId(id(token));
    },
  };
}
