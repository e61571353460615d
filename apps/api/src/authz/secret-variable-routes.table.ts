import { one, writeA, type RouteEntry } from './route-expectations.js';
import type { Fixtures } from './authz-fixtures.js';
import { VARIABLE_GROUP_ROUTES } from './variable-group-routes.table.js';

/** A fresh service of A holding one secret variable (written as the API stores it: sealed value, marked name). */
async function serviceWithSecret(f: Fixtures): Promise<string> {
  const id = await f.freshService();
  await f.h.container.db.service.update({
    where: { id },
    data: {
      variables: { AUTHZ_SECRET: 'authz-secret-value' },
      secretNames: { AUTHZ_SECRET: new Date().toISOString() },
    },
  });
  return id;
}

// Secret variables (docs/secrets.md#secret-variables): revealing one is changing-the-service
// territory, like PATCH: viewers are refused (403), other customers see nothing (404).
export const SECRET_VARIABLE_ROUTES: Record<string, RouteEntry> = {
  'POST /api/services/:id/secret-variables/reveal': one('reveal a secret', writeA(200), async (f) => ({
    url: `/api/services/${await serviceWithSecret(f)}/secret-variables/reveal`,
    payload: { name: 'AUTHZ_SECRET' },
  })),
  // Shared variable groups (issue 30 as well), in their own file.
  ...VARIABLE_GROUP_ROUTES,
};
