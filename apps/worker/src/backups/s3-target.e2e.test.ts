import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackupContainers } from '../adapters/backup-containers.js';
import { volumeFixtures } from '../testing/volume-fixtures.js';
import { createDerivedRepositoryKeys } from './repository.js';
import { createS3Target, type S3Settings } from './s3-target.js';
import { createVolumeEngine } from './volume-engine.js';

/**
 * The S3 target end to end (docs/backups.md#the-s3-target): real restic in the real engine
 * containers, through the worker's relay, into an S3-compatible server (s3rver) on loopback. Over
 * https with a certificate of the test's own (BACKUP_S3_CA_FILE): restic signs plain-http uploads
 * as aws-chunked streams, which s3rver stores undecoded, and TLS shows the relay passes it through.
 */
const IMAGE = process.env.BACKUP_IMAGE ?? 'local/hostctl-restic:2';
const SECRET_KEY = `s3-secret-${randomBytes(12).toString('hex')}`;
const containers = createBackupContainers({
  socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock',
});
const customerA = randomUUID();
const customerB = randomUUID();
const run = randomUUID();
const { newVolume, onVolume, checksums, removeAll } = volumeFixtures(containers, IMAGE, 'hostctl-s3test');

let s3: S3rver;
let s3Dir: string;
let relayDir: string;
let caFile: string;
let settings: S3Settings;

const engineFor = (overrides: Partial<S3Settings> = {}, keys?: { passwordFor(id: string): string }) =>
  createVolumeEngine({
    containers,
    target: createS3Target({ ...settings, ...overrides }, keys),
    image: IMAGE,
  });

beforeAll(async () => {
  s3Dir = await mkdtemp(path.join(tmpdir(), 'hostctl-s3rver-'));
  relayDir = await mkdtemp(path.join(tmpdir(), 'hostctl-relay-'));
  const certDir = await mkdtemp(path.join(tmpdir(), 'hostctl-s3cert-'));
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    path.join(certDir, 'key.pem'),
    '-out',
    path.join(certDir, 'cert.pem'),
  ]);
  caFile = path.join(certDir, 'cert.pem');
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Dir,
    key: await readFile(path.join(certDir, 'key.pem')),
    cert: await readFile(caFile),
    configureBuckets: [{ name: 'backups', configs: [] }],
  });
  const { port } = await s3.run();
  settings = {
    BACKUP_KEY: randomBytes(32).toString('hex'),
    BACKUP_S3_ENDPOINT: `https://127.0.0.1:${port}`,
    BACKUP_S3_BUCKET: 'backups',
    BACKUP_S3_PREFIX: 'hostctl',
    BACKUP_S3_REGION: 'us-east-1',
    // s3rver's one built-in account: it checks the signature made with this secret.
    BACKUP_S3_ACCESS_KEY_ID: 'S3RVER',
    BACKUP_S3_SECRET_ACCESS_KEY: 'S3RVER',
    BACKUP_S3_CA_FILE: caFile,
    BACKUP_RELAY_DIR: relayDir,
  };
});
afterAll(async () => {
  await removeAll();
  await s3?.close();
  await rm(s3Dir, { recursive: true, force: true });
  await rm(relayDir, { recursive: true, force: true });
  await rm(path.dirname(caFile), { recursive: true, force: true });
});

describe('the S3 target', () => {
  let snapshotA: string;
  let before: string;

  it('backs a volume up into the bucket and restores it byte for byte', async () => {
    const source = await newVolume();
    await onVolume(
      source,
      'mkdir -p /data/sub && dd if=/dev/urandom of=/data/sub/blob bs=1024 count=300 2>/dev/null && ' +
        'printf "hello" > /data/a.txt && chmod 640 /data/a.txt && chown 1000:1000 /data/sub/blob',
    );
    before = await checksums(source);
    const engine = engineFor();
    await engine.ensureRepository(run, customerA);
    const summary = await engine.backupVolume(run, {
      customerId: customerA,
      serviceId: randomUUID(),
      volume: 'data',
      dockerVolume: source,
    });
    snapshotA = summary.snapshotId;
    expect(summary.files).toBe(2);
    expect(summary.bytes).toBeGreaterThanOrEqual(300 * 1024);

    const target = await newVolume();
    await engine.restoreInto(run, customerA, snapshotA, target);
    expect(await checksums(target)).toBe(before);
    expect(before).toContain('640 5 0 ./a.txt');
    expect(before).toContain(' 1000 ./sub/blob');
    // The relay's sockets go with their containers.
    expect(await readdir(relayDir)).toEqual([]);
  });

  it("keeps each customer's repository under a prefix of its own", async () => {
    await engineFor().ensureRepository(run, customerB);
    const prefixes = await readdir(path.join(s3Dir, 'backups', 'hostctl'));
    expect(prefixes.sort()).toEqual([customerA, customerB].sort());
  });

  it("cannot open one customer's repository with another customer's password", async () => {
    const ownKeys = createDerivedRepositoryKeys(settings.BACKUP_KEY);
    const list = ['restic', 'snapshots', '--no-cache', '--json'];
    const own = await engineFor().restic(run, customerA, list, []);
    expect(own.exitCode, own.stderr).toBe(0);
    expect(own.stdout).toContain(snapshotA);

    // The S3 credentials are the same; only the repository password is B's.
    const asB = engineFor({}, { passwordFor: () => ownKeys.passwordFor(customerB) });
    const refused = await asB.restic(run, customerA, list, []);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/wrong password|no key found/);
    expect(refused.stdout).not.toContain(snapshotA);
  });

  it('fails with a reason that carries no credential when the endpoint refuses the key', async () => {
    const engine = engineFor({ BACKUP_S3_SECRET_ACCESS_KEY: SECRET_KEY });
    const error = await engine.ensureRepository(run, customerA).then(
      () => null,
      (caught: unknown) => caught as Error,
    );
    expect(error?.message).toMatch(/the repository cannot be opened/);
    expect(error?.message).not.toContain(SECRET_KEY);
    expect(error?.message).not.toContain(
      createDerivedRepositoryKeys(settings.BACKUP_KEY).passwordFor(customerA),
    );
  });

  it('reaches an endpoint given by name (the container has no /etc/hosts of its own)', async () => {
    const byName = engineFor({
      BACKUP_S3_ENDPOINT: settings.BACKUP_S3_ENDPOINT.replace('127.0.0.1', 'localhost'),
    });
    const listed = await byName.restic(run, customerA, ['restic', 'snapshots', '--no-cache', '--json'], []);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(snapshotA);
  });

  it('gives the engine container no network: only its loopback and the relay socket', async () => {
    const engine = engineFor();
    // restic is not needed to look: the relay wrapper runs any command once its end listens.
    const seen = await engine.restic(run, customerA, ['cat', '/proc/net/dev', '/proc/net/route'], []);
    expect(seen.exitCode, seen.stderr).toBe(0);
    const interfaces = seen.stdout
      .split('\n')
      .filter((line) => line.includes(':') && !line.includes('|'))
      .map((line) => line.split(':')[0]!.trim());
    expect(interfaces).toEqual(['lo']);
    // No route at all: nothing but 127.0.0.1 inside the container is reachable.
    expect(seen.stdout).not.toMatch(/^\w+\t[0-9A-F]{8}/m);
  });
});
