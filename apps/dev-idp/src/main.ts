// Development/test identity provider: oidc-provider 9 on loopback with accounts from a JSON file.
// Prints one JSON line {"event":"ready","issuer":...} on stdout once it accepts requests.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevIdp } from './server.js';

const env = process.env;
const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
const appUrl = (env.PUBLIC_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const defaultAccounts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../accounts.json');

const idp = await startDevIdp({
  host: env.DEV_IDP_HOST ?? '127.0.0.1',
  port: Number(env.DEV_IDP_PORT ?? 3100),
  ...(env.DEV_IDP_ISSUER ? { issuer: env.DEV_IDP_ISSUER } : {}),
  accountsFile: env.DEV_IDP_ACCOUNTS ?? defaultAccounts,
  clientId: env.OIDC_CLIENT_ID ?? 'hostctl-dashboard',
  clientSecret: env.OIDC_CLIENT_SECRET || 'dev-client-secret-not-for-production',
  redirectUris:
    list(env.DEV_IDP_REDIRECT_URIS).length > 0
      ? list(env.DEV_IDP_REDIRECT_URIS)
      : [`${appUrl}/api/auth/callback`],
  postLogoutRedirectUris:
    list(env.DEV_IDP_POST_LOGOUT_REDIRECT_URIS).length > 0
      ? list(env.DEV_IDP_POST_LOGOUT_REDIRECT_URIS)
      : [`${appUrl}/`],
});
process.stdout.write(`${JSON.stringify({ event: 'ready', issuer: idp.issuer, port: idp.port })}\n`);

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  const timer = setTimeout(() => process.exit(1), 5_000);
  timer.unref();
  await idp.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
