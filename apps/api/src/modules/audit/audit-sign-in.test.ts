import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import {
  createAuthHarness,
  provision,
  TEST_CALLBACK,
  testAccount,
  type AuthHarness,
} from '../auth/test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from '../auth/test-support/dev-idp-process.js';
import { signIn } from '../auth/test-support/oidc-login.js';

/** Sign-in is a GET that changes state: it is audited, successful or not (docs/audit.md). */
const dana = testAccount('dana');
let danaId: string;
let idp: DevIdpProcess;
let h: AuthHarness;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [dana],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  danaId = (await provision(h.store, dana, 'viewer')).id;
});
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

async function rowOf(response: LightMyRequestResponse) {
  await h.container.audit.flush();
  return h.container.db.auditEvent.findFirstOrThrow({
    where: { requestId: String(response.headers['x-request-id']) },
  });
}

describe('sign-in in the audit log', () => {
  it('records a successful sign-in with the user, and never the authorization code', async () => {
    const { response, callbackUrl } = await signIn(h.app, dana);
    const row = await rowOf(response);
    expect(row).toMatchObject({
      actorType: 'user',
      actorUserId: danaId,
      method: 'GET',
      route: '/api/auth/callback',
      action: 'auth.sign_in',
      statusCode: 302,
    });
    const code = new URL(callbackUrl).searchParams.get('code')!;
    expect(JSON.stringify(row)).not.toContain(code);
  });

  it('records a refused callback as anonymous', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/api/auth/callback?code=stolen&state=x' });
    expect(response.statusCode).toBe(400);
    expect(await rowOf(response)).toMatchObject({
      actorType: 'anonymous',
      actorUserId: null,
      action: 'auth.sign_in',
      statusCode: 400,
    });
  });
});
