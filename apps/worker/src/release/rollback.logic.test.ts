// Rollback runs exactly what its target ran (images pinned to the recorded digests), a retried
// repository deployment reuses the images it built, and built images are kept per RELEASES_KEPT.
import { randomBytes } from 'node:crypto';
import { OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { createWorkerDeploymentStore } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComposeService } from '../testing/fixtures.js';
import { createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';
import { pruneBuiltImages } from './image-retention.js';

const REGISTRY_IMAGE = '127.0.0.1:5000/rollback-app:1';
const LOCAL_IMAGE = 'local/rollback-app:1';
const composeOf = (image: string) => `services:\n  web:\n    image: ${image}\n    ports: ["8080"]\n`;
const digest = () => `sha256:${randomBytes(32).toString('hex')}`;

let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({ stabilizationMs: 200, drainMs: 200 });
});
afterAll(() => h.close());

const deploymentOf = (id: string) => h.db.deployment.findUniqueOrThrow({ where: { id } });

/** As the API's rollback does: a rollback deployment; the service's definition is left alone. */
async function requestRollback(serviceId: string, target: string): Promise<string> {
  return h.db.$transaction(async (tx) => {
    await tx.service.update({ where: { id: serviceId }, data: { status: 'deploying' } });
    const deployment = await tx.deployment.create({
      data: { serviceId, trigger: 'rollback', rollbackOf: target },
    });
    return deployment.id;
  });
}

async function webImage(serviceId: string, deploymentId: string) {
  const web = await h.webOf(serviceId, deploymentId);
  return h.runtime.imageOf(web!.id);
}

describe('rollback', () => {
  it('runs the target release again with its images pinned to the digests it ran', async () => {
    const first = digest();
    h.runtime.publish(REGISTRY_IMAGE, first);
    const service = await h.deploy(composeOf(REGISTRY_IMAGE));
    expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
    const pinned = `127.0.0.1:5000/rollback-app@${first}`;
    expect((await deploymentOf(service.deploymentId)).imageDigests).toEqual({ web: pinned });

    // The tag moves on: a redeploy runs the new image.
    h.runtime.publish(REGISTRY_IMAGE, digest());
    const redeploy = await h.redeploy(service.serviceId);
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    expect((await deploymentOf(redeploy)).imageDigests).not.toEqual({ web: pinned });

    const rollback = await requestRollback(service.serviceId, service.deploymentId);
    expect(await h.run(rollback)).toEqual({ status: 'succeeded' });
    expect(await webImage(service.serviceId, rollback)).toBe(pinned);
    expect(await deploymentOf(rollback)).toMatchObject({
      status: 'succeeded',
      imageDigests: { web: pinned },
      sourceCompose: composeOf(REGISTRY_IMAGE),
    });
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([rollback]));
    expect(await h.logOf(rollback)).toMatch(new RegExp(`Rolling back to release ${service.deploymentId}`));
    const event = await h.db.serviceEvent.findFirstOrThrow({
      where: { serviceId: service.serviceId },
      orderBy: { id: 'desc' },
    });
    expect(event).toMatchObject({ type: 'rollback', status: 'success' });
  });

  it('pins an image built or loaded on this host by its id, and fails clearly once it is gone', async () => {
    h.runtime.addImage(LOCAL_IMAGE);
    const service = await h.deploy(composeOf(LOCAL_IMAGE));
    expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
    const firstId = (await deploymentOf(service.deploymentId)).imageDigests as { web: string };
    expect(firstId.web).toMatch(/^sha256:/);

    h.runtime.addImage(LOCAL_IMAGE);
    const redeploy = await h.redeploy(service.serviceId);
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });

    const rollback = await requestRollback(service.serviceId, service.deploymentId);
    expect(await h.run(rollback)).toEqual({ status: 'succeeded' });
    expect(await webImage(service.serviceId, rollback)).toBe(firstId.web);

    await h.runtime.removeImage(firstId.web);
    const again = await requestRollback(service.serviceId, service.deploymentId);
    await h.run(again);
    const failed = await deploymentOf(again);
    expect(failed).toMatchObject({ status: 'failed', step: 'pull' });
    expect(failed.error).toMatch(/no longer on this host; only the last RELEASES_KEPT releases/);
    // The release that served before the attempt still does.
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([rollback]));
    expect((await h.db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe(
      'running',
    );
  });

  it('gives the service the definition of the release it ran only when it succeeds', async () => {
    const serviceOf = (id: string) => h.db.service.findUniqueOrThrow({ where: { id } });
    const v1 = composeOf(LOCAL_IMAGE);
    const v2 = `${v1}    environment: {LEVEL: "v2"}\n`;
    h.runtime.addImage(LOCAL_IMAGE);
    const service = await h.deploy(v1);
    expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
    const redeploy = await h.redeploy(service.serviceId, v2);
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    expect((await serviceOf(service.serviceId)).compose).toBe(v2);

    const rollback = await requestRollback(service.serviceId, service.deploymentId);
    // Requested, not yet run: the service keeps its own definition.
    expect((await serviceOf(service.serviceId)).compose).toBe(v2);
    expect(await h.run(rollback)).toEqual({ status: 'succeeded' });
    expect((await serviceOf(service.serviceId)).compose).toBe(v1);

    // A rollback that fails (the image of its target is gone) does not give the service its
    // target's definition: the service keeps the one of the release still running (v1).
    const pinned = (await deploymentOf(redeploy)).imageDigests as { web: string };
    await h.runtime.removeImage(pinned.web);
    const failing = await requestRollback(service.serviceId, redeploy);
    await h.run(failing);
    expect(await deploymentOf(failing)).toMatchObject({ status: 'failed' });
    expect((await serviceOf(service.serviceId)).compose).toBe(v1);
  });

  it('refuses a target that recorded no digests', async () => {
    h.runtime.addImage(LOCAL_IMAGE);
    const service = await h.deploy(composeOf(LOCAL_IMAGE));
    expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
    await h.db.$executeRaw`UPDATE deployments SET image_digests = NULL WHERE id = ${service.deploymentId}`;
    const rollback = await requestRollback(service.serviceId, service.deploymentId);
    await h.run(rollback);
    expect((await deploymentOf(rollback)).error).toMatch(/recorded no image digests/);
  });
});

describe('a retried repository deployment', () => {
  it('runs the plan its earlier attempt built when the images for the commit exist, without a clone', async () => {
    const image = 'local/built-for-commit:abc123';
    h.runtime.addImage(image);
    const service = await createComposeService(h.db, { compose: '', deployMethod: 'git' });
    await h.db.service.update({
      where: { id: service.serviceId },
      data: { gitUrl: 'https://git.invalid/repo.git' },
    });
    const plan = {
      containers: [
        {
          name: 'web',
          image,
          environment: {},
          labels: {},
          volumes: [],
          ports: [8080],
          dependsOn: [],
          restart: 'unless-stopped',
          init: true,
          limits: {},
        },
      ],
      volumes: [],
      web: { container: 'web', port: 8080 },
      source: { commit: 'abc123' },
    };
    await h.db.deployment.update({ where: { id: service.deploymentId }, data: { plan, commit: 'abc123' } });
    // No repository sources are wired in the harness: a clone would fail the deployment.
    expect(await h.run(service.deploymentId, 2)).toEqual({ status: 'succeeded' });
    expect(await h.logOf(service.deploymentId)).toMatch(
      /Resuming: the images built for abc123 exist; no clone or build/,
    );
    await h.db.service.delete({ where: { id: service.serviceId } });
  });
});

describe('retention of built images', () => {
  it('keeps the images of the last N succeeded releases of the service and removes older ones', async () => {
    const service = await createComposeService(h.db, { compose: composeOf(LOCAL_IMAGE) });
    const labels = { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: service.serviceId };
    const ids: string[] = [];
    for (const commit of ['c1', 'c2', 'c3', 'c4']) {
      const tag = `local/retention-${service.serviceId.slice(0, 8)}:${commit}`;
      h.runtime.addImage(tag, labels);
      const id = (await h.runtime.inspectImage(tag))!.id;
      ids.push(id);
      await h.db.deployment.create({
        data: {
          serviceId: service.serviceId,
          trigger: 'redeploy',
          status: 'succeeded',
          imageDigests: { web: id },
        },
      });
    }
    h.runtime.addImage('local/not-built-here:1');
    const removed = await pruneBuiltImages(
      h.runtime,
      createWorkerDeploymentStore(h.db),
      service.serviceId,
      2,
    );
    expect(removed).toHaveLength(2);
    expect(await h.runtime.inspectImage(ids[0]!)).toBeNull();
    expect(await h.runtime.inspectImage(ids[1]!)).toBeNull();
    expect(await h.runtime.inspectImage(ids[2]!)).not.toBeNull();
    expect(await h.runtime.inspectImage(ids[3]!)).not.toBeNull();
    expect(await h.runtime.inspectImage('local/not-built-here:1')).not.toBeNull();
    await h.db.service.delete({ where: { id: service.serviceId } });
  });
});
