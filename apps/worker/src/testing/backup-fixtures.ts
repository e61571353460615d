import { randomUUID } from 'node:crypto';
import type { Db } from '@hostctl/db';

/**
 * A running service with one succeeded release whose plan has a `data` volume, and a queued backup
 * of it: what the backup processors need from the database. `customerId` puts it beside another
 * service of the same customer (one repository); `ownBucket` gives that customer its own target.
 */
export async function serviceWithRelease(
  db: Db,
  options: { customerId?: string; ownBucket?: string | null } = {},
): Promise<{ serviceId: string; customerId: string; backupId: string }> {
  const suffix = randomUUID().slice(0, 8);
  const customerId =
    options.customerId ?? (await db.customer.create({ data: { name: `backups-${suffix}` } })).id;
  const service = await db.service.create({
    data: {
      name: `svc-${suffix}`,
      customerId,
      status: 'running',
      deployMethod: 'compose',
      compose: 'services: {}',
      url: `http://svc-${suffix}.apps.localhost`,
    },
  });
  await db.deployment.create({
    data: {
      serviceId: service.id,
      trigger: 'create',
      status: 'succeeded',
      plan: {
        containers: [{ name: 'db', image: 'local/busybox:1', labels: {}, environment: {}, volumes: [] }],
        volumes: ['data'],
      },
    },
  });
  if (options.ownBucket)
    await db.customerBackupTarget.create({
      data: {
        customerId,
        endpoint: 'https://s3.example.com:443',
        bucket: options.ownBucket,
        prefix: 'hostctl',
        region: 'us-east-1',
        credentials: { access_key_id: 'AKID', secret_access_key: 'choice-secret' },
      },
    });
  const backup = await db.backup.create({ data: { serviceId: service.id, customerId, method: 'live' } });
  return { serviceId: service.id, customerId, backupId: backup.id };
}
