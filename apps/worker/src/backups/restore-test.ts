import type { PlanContainer } from '@hostctl/compose';
import { CONTAINER_CAPABILITIES, DEFAULT_CONTAINER_LIMITS } from '@hostctl/compose';
import type { BackupRun, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { EngineMount } from '../adapters/backup-containers.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError, createRedactor } from '../pipeline/step-errors.js';
import { storedPlan } from '../release/release-images.js';
import { engineReason } from './restic.js';
import type { VolumeEngine } from './volume-engine.js';

export interface RestoreTestDeps {
  engine: Pick<VolumeEngine, 'restoreInto' | 'ensureVolume' | 'removeVolume' | 'runComponent'>;
  /** The release the backup was taken under: its components' images and verify commands. */
  deployments: Pick<WorkerDeploymentStore, 'findById' | 'lastSucceeded'>;
  services: Pick<WorkerServiceStore, 'findById'>;
  instance: string;
}

type Log = (line: string) => Promise<void>;

/**
 * The restore half of a check (docs/backups.md#verification): every snapshot of the backup is
 * restored (`restic restore --verify`, the restore's own engine step) into a scratch volume of its
 * own, never the live one; then each component that declares `x-hostctl.backup.verify` runs that
 * argv in a short-lived container of the image it ran when the backup was taken, with the scratch
 * volumes mounted where the component mounts its volumes, its limits and environment, no network,
 * killed after its timeout. Exit 0 passes. The scratch volumes go whatever happened (they carry
 * the service's labels, so a worker killed meanwhile leaves them to the service's deletion).
 * Throws the reason of the first failure, with the service's variable values masked.
 */
export async function restoreTest(deps: RestoreTestDeps, backup: BackupRun, log: Log): Promise<void> {
  const service = await deps.services.findById(backup.serviceId);
  if (!service || service.deletedAt) throw new PermanentStepError('the service was deleted');
  const redact = createRedactor(service.variables);
  const release = backup.deploymentId
    ? await deps.deployments.findById(backup.deploymentId)
    : await deps.deployments.lastSucceeded(service.id);
  const plan = storedPlan(release);
  const objects = serviceObjects(service.id, deps.instance);
  // Named after the backup, so a check started again removes an interrupted one's scratch first.
  const short = backup.id.replace(/-/g, '').slice(0, 8);
  const scratch = new Map(
    backup.volumes.map((volume) => [volume.name, `${objects.volume(volume.name)}-verify-${short}`]),
  );
  try {
    for (const volume of backup.volumes) {
      const name = scratch.get(volume.name)!;
      await deps.engine.removeVolume(name);
      await deps.engine.ensureVolume(name, objects.labels);
      await deps.engine.restoreInto(backup.id, backup.customerId, volume.snapshot_id, name);
      await log(`volume ${volume.name}: snapshot ${volume.snapshot_id} restored into a scratch volume`);
    }
    for (const container of plan?.containers ?? []) {
      const verify = container.backupHooks?.verify;
      if (!verify) continue;
      const image = release?.imageDigests?.[container.name] ?? container.image;
      await runVerify(deps, backup.id, { container, image, verify, scratch }, redact);
      await log(`verify command of ${container.name} passed`);
    }
  } finally {
    for (const name of scratch.values()) await deps.engine.removeVolume(name).catch(() => undefined);
  }
}

async function runVerify(
  deps: RestoreTestDeps,
  runId: string,
  input: { container: PlanContainer; image: string; verify: string[]; scratch: Map<string, string> },
  redact: (text: string) => string,
): Promise<void> {
  const { container } = input;
  const mounts: EngineMount[] = container.volumes.map((mount) => {
    const source = input.scratch.get(mount.volume);
    if (!source)
      throw new PermanentStepError(
        `${container.name} mounts the volume ${mount.volume}, which the backup does not hold`,
      );
    return { type: 'volume', source, target: mount.target, readOnly: mount.readOnly };
  });
  const timeoutSeconds = container.backupHooks?.timeoutSeconds ?? 300;
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const result = await deps.engine.runComponent(
    runId,
    {
      image: input.image,
      cmd: input.verify,
      env: Object.entries(container.environment).map(([key, value]) => `${key}=${value}`),
      mounts,
      component: {
        user: container.user,
        workingDir: container.workingDir,
        limits: {
          Memory: container.limits.memoryBytes ?? DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes,
          NanoCpus: container.limits.nanoCpus ?? DEFAULT_CONTAINER_LIMITS.defaultNanoCpus,
          PidsLimit: container.limits.pids ?? DEFAULT_CONTAINER_LIMITS.defaultPids,
        },
        capabilities: CONTAINER_CAPABILITIES,
      },
    },
    timeout,
  );
  if (timeout.aborted)
    throw new Error(`verify command of ${container.name} did not finish within ${timeoutSeconds} s`);
  if (result.exitCode !== 0)
    throw new Error(
      redact(
        `verify command of ${container.name} failed (exit ${result.exitCode}): ${engineReason(result.stderr, result.stdout)}`,
      ),
    );
}
