import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Concurrent variable changes of one service (docs/secrets.md#secret-variables): each PATCH names
 * only what it changes, so two CI jobs running `hostctl services set` at once must both land. The
 * API merges each change into the variables current at its write, not into an earlier read.
 */
let h: Harness;
let admin: { id: string; auth: string };
let customer: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customer = (await h.customer()).id;
});
afterAll(async () => h?.close());

const patch = (id: string, payload: object) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/services/${id}`,
    headers: { authorization: admin.auth },
    payload,
  });

describe('concurrent PATCHes of one service', () => {
  it('keep every change: plain, secret and removals, none lost to another', async () => {
    const { id } = (await h.createService(admin.auth, {
      customer_id: customer,
      variables: { KEEP: 'k', GONE: 'g' },
    })) as { id: string };
    const changes = [
      ...Array.from({ length: 4 }, (_, i) => ({ variables: { [`PLAIN_${i}`]: `p${i}` } })),
      ...Array.from({ length: 3 }, (_, i) => ({ secret_variables: { [`SECRET_${i}`]: `s${i}` } })),
      { variables: { GONE: null } },
    ];
    const answers = await Promise.all(changes.map((change) => patch(id, change)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(changes.map(() => 200));

    const detail = json<{ variables: Record<string, string>; secret_variables: object }>(
      await h.app.inject({
        method: 'GET',
        url: `/api/services/${id}`,
        headers: { authorization: admin.auth },
      }),
    );
    expect(detail.variables).toEqual({
      KEEP: 'k',
      PLAIN_0: 'p0',
      PLAIN_1: 'p1',
      PLAIN_2: 'p2',
      PLAIN_3: 'p3',
    });
    expect(Object.keys(detail.secret_variables).sort()).toEqual(['SECRET_0', 'SECRET_1', 'SECRET_2']);
  });
});
