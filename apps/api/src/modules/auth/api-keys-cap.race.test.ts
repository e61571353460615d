import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  TEST_CALLBACK,
  TEST_ORIGIN,
  testAccount,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import { signIn } from './test-support/oidc-login.js';

/**
 * The `api_keys` quota under a race (issue 27, class 8, then issue 31; docs/quotas.md): an
 * unscoped user's own keys (limited to no customer) belong to no customer and are held to the
 * default plan's `api_keys` limit (100 as migrated) per user; deploy tokens are API keys and count
 * too. With 70 active keys, 40 creates sent together by one signed-in user through two API
 * replicas sharing the database end with exactly 100 active keys and the rest refused with the one
 * 409 `quota_exceeded` problem. (70 first: the race is at the limit, and the burst stays within
 * what the replicas' pools serve without queueing past their 3 s acquire timeout,
 * docs/security/limits.md#count-caps.) Customers' keys: quota-keys-webhooks.race.test.ts.
 */
const grace = testAccount('grace');
let idp: DevIdpProcess;
let a: AuthHarness;
let b: AuthHarness;
let graceId: string;
let session: string;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [grace],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  a = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  b = await createAuthHarness({ OIDC_ISSUER: idp.issuer, QUEUE_PREFIX: a.config.QUEUE_PREFIX });
  graceId = (await provision(a.store, grace, 'operator')).id;
  session = (await signIn(a.app, grace)).session;
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await idp?.stop();
});

const CAP = 100;

describe("an unscoped user's own API keys, raced", () => {
  it('40 parallel creates over two replicas at 70 keys: exactly 100 active, the rest 409 problems', async () => {
    await a.container.db.apiKey.createMany({
      data: Array.from({ length: 70 }, (_, i) => ({
        userId: graceId,
        name: `seed ${i}`,
        digest: randomUUID(),
      })),
    });
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).app.inject({
          method: 'POST',
          url: '/api/auth/api-keys',
          headers: { cookie: session, origin: TEST_ORIGIN },
          payload: { name: `race ${i}` },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(CAP - 70);
    expect(statuses.filter((status) => status === 409)).toHaveLength(10);
    expect(await a.container.db.apiKey.count({ where: { userId: graceId, revokedAt: null } })).toBe(CAP);
    for (const refused of responses.filter((response) => response.statusCode === 409)) {
      expect(json(refused)).toMatchObject({
        code: 'quota_exceeded',
        quota: { name: 'api_keys', limit: CAP, usage: CAP, requested: 1, customer_id: null },
      });
      expect(json<{ detail: string }>(refused).detail).toMatch(/you use 100 of 100 active API keys/);
    }
  });
});
