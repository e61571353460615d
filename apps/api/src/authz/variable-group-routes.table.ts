import { uniqueName } from '../test-support/harness.js';
import { all, one, readA, writeA, type RouteEntry } from './route-expectations.js';
import type { Fixtures } from './authz-fixtures.js';

/**
 * A fresh variable group of A (one plain, one secret variable), written as the API stores it;
 * `attached` also attaches it to a fresh running service of A (for the redeploy).
 */
async function freshGroup(f: Fixtures, attached = false): Promise<string> {
  const { db } = f.h.container;
  const group = await db.variableGroup.create({
    data: {
      customerId: f.customerA,
      name: uniqueName('authz-group'),
      variables: { AUTHZ_PLAIN: 'plain', AUTHZ_SECRET: 'authz-group-secret' },
      secretNames: { AUTHZ_SECRET: new Date().toISOString() },
    },
  });
  if (attached)
    await db.serviceVariableGroup.create({
      data: { serviceId: await f.freshService(), groupId: group.id, position: 0 },
    });
  return group.id;
}

/** A fresh group of A attached to a fresh service of A (what a detach needs). */
async function attachedPair(f: Fixtures): Promise<{ groupId: string; serviceId: string }> {
  const groupId = await freshGroup(f);
  const serviceId = await f.freshService();
  await f.h.container.db.serviceVariableGroup.create({ data: { serviceId, groupId, position: 0 } });
  return { groupId, serviceId };
}

/**
 * Variable groups (docs/secrets.md#variable-groups): customer resources scoped exactly like
 * services. Reads are readA (an unscoped viewer sees nothing, another customer 404); changes are
 * writeA (viewers 403, another customer 404). Creating for A: other customers' callers 403.
 */
export const VARIABLE_GROUP_ROUTES: Record<string, RouteEntry> = {
  'GET /api/variable-groups': one('list (filtered by scope)', all(200), () => ({
    url: '/api/variable-groups',
  })),
  'POST /api/variable-groups': one(
    'create for A',
    { admin: [201, 201, 403], operator: [201, 201, 403], viewer: [403, 403, 403] },
    (f) => ({
      url: '/api/variable-groups',
      payload: { name: uniqueName('authz-group'), customer_id: f.customerA, variables: { A: 'b' } },
    }),
  ),
  'GET /api/variable-groups/:id': one('detail', readA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}`,
  })),
  'PATCH /api/variable-groups/:id': one('change', writeA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}`,
    payload: { variables: { AUTHZ_PLAIN: 'changed' } },
  })),
  'DELETE /api/variable-groups/:id': one('delete', writeA(204), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}`,
  })),
  'GET /api/variable-groups/:id/services': one('affected services', readA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}/services`,
  })),
  'POST /api/variable-groups/:id/redeploy': one('redeploy the services', writeA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f, true)}/redeploy`,
  })),
  'POST /api/variable-groups/:id/attach': one('attach to a service', writeA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}/attach`,
    payload: { service_id: await f.freshService() },
  })),
  'POST /api/variable-groups/:id/detach': one('detach from a service', writeA(200), async (f) => {
    const { groupId, serviceId } = await attachedPair(f);
    return { url: `/api/variable-groups/${groupId}/detach`, payload: { service_id: serviceId } };
  }),
  'POST /api/variable-groups/:id/secret-variables/reveal': one('reveal a secret', writeA(200), async (f) => ({
    url: `/api/variable-groups/${await freshGroup(f)}/secret-variables/reveal`,
    payload: { name: 'AUTHZ_SECRET' },
  })),
};
