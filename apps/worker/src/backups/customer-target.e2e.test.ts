import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { createWorkerBackupTargetsStore, type Db } from '@hostctl/db';
import { parseAllowedHosts } from '@hostctl/source-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackupContainers } from '../adapters/backup-containers.js';
import { volumeFixtures } from '../testing/volume-fixtures.js';
import { createTestDb } from '../testing/fixtures.js';
import { createBackupTargets, type BackupTargets } from './backup-targets.js';
import { createLocalTarget } from './repository.js';
import { createVolumeEngine } from './volume-engine.js';

/**
 * A customer's own bucket end to end (docs/backups.md#a-customers-own-target): the target stored
 * with its credentials sealed (the real database and vault), chosen per customer, real restic in
 * the engine containers through the relay into s3rver over https on loopback (its CA stored with
 * the target), while another customer's backup still goes to the operator's default (local).
 */
const IMAGE = process.env.BACKUP_IMAGE ?? 'local/hostctl-restic:2';
const BACKUP_KEY = 'k'.repeat(48);
const containers = createBackupContainers({
  socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock',
});
const run = randomUUID();
const { newVolume, onVolume, checksums, removeAll } = volumeFixtures(containers, IMAGE, 'hostctl-owntarget');

let db: Db;
let s3: S3rver;
let s3Dir: string;
let relayDir: string;
let localDir: string;
let certDir: string;
let port: number;
let customerA: string;
let customerB: string;

const defaultEngine = () =>
  createVolumeEngine({
    containers,
    target: createLocalTarget({ BACKUP_LOCAL_PATH: localDir, BACKUP_KEY }),
    image: IMAGE,
  });
const targetsWith = (allowed: string): BackupTargets =>
  createBackupTargets('local', {
    store: createWorkerBackupTargetsStore(db),
    settings: { BACKUP_KEY, BACKUP_RELAY_DIR: relayDir },
    policy: { allowedHosts: parseAllowedHosts(allowed, 'BACKUP_TARGET_ALLOWED_HOSTS') },
  });
const targets = () => targetsWith(`127.0.0.1:${port}`);

const setTarget = async (customerId: string, bucket: string, ca: string) =>
  db.customerBackupTarget.upsert({
    where: { customerId },
    create: {
      customerId,
      endpoint: `https://127.0.0.1:${port}`,
      bucket,
      prefix: 'tenant',
      region: 'us-east-1',
      caPem: ca,
      credentials: { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' },
    },
    update: { bucket },
  });

beforeAll(async () => {
  db = createTestDb();
  s3Dir = await mkdtemp(path.join(tmpdir(), 'hostctl-owns3-'));
  relayDir = await mkdtemp(path.join(tmpdir(), 'hostctl-ownrelay-'));
  localDir = await mkdtemp(path.join(tmpdir(), 'hostctl-ownlocal-'));
  certDir = await mkdtemp(path.join(tmpdir(), 'hostctl-owncert-'));
  await promisify(execFile)('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1'],
    ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(certDir, 'key.pem')],
    ...['-out', path.join(certDir, 'cert.pem')],
  ]);
  const cert = await readFile(path.join(certDir, 'cert.pem'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Dir,
    key: await readFile(path.join(certDir, 'key.pem')),
    cert,
    configureBuckets: [
      { name: 'tenant-a', configs: [] },
      { name: 'tenant-a-new', configs: [] },
    ],
  });
  ({ port } = await s3.run());
  customerA = (await db.customer.create({ data: { name: `own-target-a-${run.slice(0, 8)}` } })).id;
  customerB = (await db.customer.create({ data: { name: `own-target-b-${run.slice(0, 8)}` } })).id;
  await setTarget(customerA, 'tenant-a', cert.toString());
}, 60_000);

afterAll(async () => {
  await removeAll();
  await s3?.close();
  for (const dir of [s3Dir, relayDir, localDir, certDir]) await rm(dir, { recursive: true, force: true });
  await db?.$disconnect();
});

describe("a customer's own backup target", () => {
  let snapshot: string;

  it('backs customer A up into its own bucket and restores from it byte for byte', async () => {
    const chosen = await targets().forBackup(customerA);
    expect(chosen).toMatchObject({ kind: 'customer', location: `https://127.0.0.1:${port}/tenant-a/tenant` });
    const engine = defaultEngine().on(chosen.target!);
    const source = await newVolume();
    await onVolume(
      source,
      'printf "rows" > /data/table && chmod 600 /data/table && mkdir /data/sub && echo x > /data/sub/y',
    );
    const before = await checksums(source);
    await engine.ensureRepository(run, customerA);
    snapshot = (
      await engine.backupVolume(run, {
        customerId: customerA,
        serviceId: randomUUID(),
        volume: 'data',
        dockerVolume: source,
      })
    ).snapshotId;

    // The backup records `customer` and this location; the restore finds the same bucket.
    const again = await targets().ofBackup({
      customerId: customerA,
      target: 'customer',
      targetLocation: chosen.location,
    });
    const restored = await newVolume();
    await defaultEngine().on(again.target!).restoreInto(run, customerA, snapshot, restored);
    expect(await checksums(restored)).toBe(before);

    expect(await readdir(path.join(s3Dir, 'tenant-a', 'tenant'))).toEqual([customerA]);
    expect(await readdir(localDir)).toEqual([]);
    // The relay's sockets and the CA file go with their containers.
    expect(await readdir(relayDir)).toEqual([]);
  });

  it("still sends customer B's backup to the operator's default", async () => {
    const chosen = await targets().forBackup(customerB);
    expect(chosen).toEqual({ kind: 'local', location: null, target: null });
    const source = await newVolume();
    await onVolume(source, 'echo b > /data/b');
    const engine = defaultEngine();
    await engine.ensureRepository(run, customerB);
    await engine.backupVolume(run, {
      customerId: customerB,
      serviceId: randomUUID(),
      volume: 'data',
      dockerVolume: source,
    });
    expect(await readdir(localDir)).toEqual([customerB]);
    expect(await readdir(path.join(s3Dir, 'tenant-a', 'tenant'))).toEqual([customerA]);
  });

  it("keeps B out of A's data even with A's bucket: B's repository there is its own, under B's password", async () => {
    const engine = defaultEngine().on((await targets().forBackup(customerA)).target!);
    const list = ['restic', 'snapshots', '--no-cache', '--json'];
    const own = await engine.restic(run, customerA, list, []);
    expect(own.exitCode, own.stderr).toBe(0);
    expect(own.stdout).toContain(snapshot);
    const asB = await engine.restic(run, customerB, list, []);
    expect(asB.exitCode).not.toBe(0);
    expect(asB.stdout).not.toContain(snapshot);
  });

  it('refuses a restore, saying why, once the customer changed or removed its target', async () => {
    const record = {
      customerId: customerA,
      target: 'customer',
      targetLocation: `https://127.0.0.1:${port}/tenant-a/tenant`,
    };
    await setTarget(customerA, 'tenant-a-new', '');
    await expect(targets().ofBackup(record)).rejects.toThrow(
      /customer's own bucket https:\/\/127\.0\.0\.1:\d+\/tenant-a\/tenant, but the customer's backup target changed since to https:\/\/127\.0\.0\.1:\d+\/tenant-a-new\/tenant/,
    );
    await db.customerBackupTarget.delete({ where: { customerId: customerA } });
    await expect(targets().ofBackup(record)).rejects.toThrow(/has no backup target any more: set it again/);
    // A backup on the operator's target is still read from it.
    await expect(
      targets().ofBackup({ customerId: customerA, target: 'local', targetLocation: null }),
    ).resolves.toMatchObject({ kind: 'local' });
  });

  it('refuses a loopback endpoint the operator did not allowlist, before any container runs', async () => {
    await setTarget(customerA, 'tenant-a', '');
    const chosen = await targetsWith('').forBackup(customerA);
    const error = await defaultEngine()
      .on(chosen.target!)
      .ensureRepository(run, customerA)
      .then(
        () => null,
        (caught: unknown) => caught as Error,
      );
    expect(error?.message).toMatch(/backup endpoint is refused: .*loopback/);
    expect(error?.message).not.toContain('S3RVER');
  });
});
