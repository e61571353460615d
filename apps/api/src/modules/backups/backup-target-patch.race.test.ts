import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Principal } from '@hostctl/auth-policy';
import { createCustomerBackupTargetsStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { createHarness, type Harness } from '../../test-support/harness.js';
import { createBackupTargetService } from './backup-target.service.js';

// A PATCH decides from the stored row whether the stored secret may stay; another writer that
// moves the target to another endpoint meanwhile must make it decide on the moved row
// (backup-target.service.ts patch, the store's `change` under the row lock). Real store, real
// database: the other writer holds the row while the PATCH starts, then commits its move.
let h: Harness;
const admin: Principal = {
  userId: 'race-admin',
  email: 'race@example.test',
  role: 'admin',
  customerId: null,
  via: 'api_key',
};
const FIRST = {
  endpoint: 'https://s3.first.example.com:443',
  bucket: 'race-bucket',
  prefix: 'p',
  region: 'us-east-1',
  caPem: null,
};

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h.close());

it("never carries the other writer's secret to the endpoint the PATCH restates", async () => {
  const customerId = (await h.customer()).id;
  const store = createCustomerBackupTargetsStore(h.container.db);
  await store.put(customerId, { ...FIRST, accessKeyId: 'AKIDFIRST', secretAccessKey: 'first-secret' });
  const service = createBackupTargetService({ store, endpointPolicy: { allowedHosts: [] } });

  let patched: Promise<unknown> = Promise.resolve();
  await h.container.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM customer_backup_targets WHERE customer_id = ${customerId} FOR UPDATE`;
    // Restating the endpoint it saw (first) without a secret: fine for the row before the move.
    patched = service
      .patch(admin, customerId, { endpoint: 'https://s3.first.example.com', prefix: 'changed' })
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await tx.customerBackupTarget.update({
      where: { customerId },
      data: {
        endpoint: 'https://s3.second.example.com:443',
        credentials: { access_key_id: 'AKIDSECOND', secret_access_key: 'second-secret' },
      },
    });
  });

  const refused = await patched;
  expect(refused).toBeInstanceOf(DomainError);
  expect((refused as DomainError).errors?.map((error) => error.path)).toEqual(['/body/secret_access_key']);
  expect(await store.find({ kind: 'all' }, customerId)).toMatchObject({
    endpoint: 'https://s3.second.example.com:443',
    prefix: 'p',
    accessKeyId: 'AKIDSECOND',
    secretAccessKey: 'second-secret',
  });
});
