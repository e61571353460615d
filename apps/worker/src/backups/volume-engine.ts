import { setTimeout as sleep } from 'node:timers/promises';
import { RESERVED_LABEL_PREFIX } from '@hostctl/domain';
import type {
  BackupContainers,
  EngineMount,
  EngineResult,
  EngineRun,
} from '../adapters/backup-containers.js';
import type { BackupTarget } from './repository.js';
import {
  VOLUME_MOUNT,
  backupCommand,
  engineReason,
  initCommand,
  isAlreadyInitialised,
  parseBackupSummary,
  restoreCommand,
  type BackupSummary,
} from './restic.js';

const LOCK_ATTEMPTS = 6;
const LOCK_WAIT_MS = 2000;
const isLockedOut = (stderr: string) => /repository is already locked/.test(stderr);

/** Marks the engine's containers of one run, so a retried run removes an interrupted one's first. */
const RUN_LABEL = `${RESERVED_LABEL_PREFIX}backup-run`;

/**
 * The steps of backups and restores on volumes, each one short-lived engine container (restic for
 * the repository, busybox `cp`/`find` between two volumes). No network in any of them: the S3
 * target's way out is a relay socket the worker opens for that one container.
 */
export function createVolumeEngine(deps: {
  containers: BackupContainers;
  target: BackupTarget;
  image: string;
}) {
  const { containers, target, image } = deps;
  let sequence = 0;
  const run = (
    runId: string,
    cmd: string[],
    mounts: EngineMount[],
    extra: { env?: string[]; capAdd?: string[] } = {},
  ) =>
    containers.run({
      name: `hostctl-backup-${runId.slice(0, 8)}-${(sequence += 1)}`,
      image,
      cmd,
      env: extra.env ?? [],
      mounts,
      labels: { [RUN_LABEL]: runId },
      capAdd: extra.capAdd,
    });
  const volume = (source: string, mountTarget: string, readOnly: boolean): EngineMount => ({
    type: 'volume',
    source,
    target: mountTarget,
    readOnly,
  });
  const check = (result: EngineResult, what: string) => {
    if (result.exitCode !== 0)
      throw new Error(
        `${what} failed (exit ${result.exitCode}): ${engineReason(result.stderr, result.stdout)}`,
      );
  };
  /** One restic command on the customer's repository; the target's secrets never reach a reason. */
  const restic = async (
    runId: string,
    customerId: string,
    cmd: string[],
    mounts: EngineMount[],
  ): Promise<EngineResult> => {
    const access = await target.open(customerId);
    try {
      let result: EngineResult;
      // Every service of a customer shares its repository: a prune holds restic's exclusive lock
      // for a while, and restic 0.14 cannot wait for a lock itself.
      for (let attempt = 1; ; attempt += 1) {
        result = await run(runId, access.command(cmd), [...access.mounts, ...mounts], {
          env: access.env,
          capAdd: access.capAdd,
        });
        if (attempt >= LOCK_ATTEMPTS || !isLockedOut(result.stderr)) break;
        await sleep(LOCK_WAIT_MS * attempt);
      }
      const hide = (text: string) =>
        access.secrets.filter(Boolean).reduce((out, secret) => out.split(secret).join('[secret]'), text);
      return { ...result, stdout: hide(result.stdout), stderr: hide(result.stderr) };
    } finally {
      await access.close();
    }
  };

  return {
    /** Removes what an interrupted attempt of the run left behind. */
    cleanUp: (runId: string) => containers.removeLabelled({ [RUN_LABEL]: runId }),

    async ensureRepository(runId: string, customerId: string): Promise<void> {
      const result = await restic(runId, customerId, initCommand(), []);
      if (result.exitCode !== 0 && !isAlreadyInitialised(result.stderr))
        throw new Error(`the repository cannot be opened: ${engineReason(result.stderr)}`);
    },

    /** One snapshot of one volume, mounted read-only: restic can never change the data it saves. */
    async backupVolume(
      runId: string,
      input: { customerId: string; serviceId: string; volume: string; dockerVolume: string },
    ): Promise<BackupSummary> {
      const result = await restic(
        runId,
        input.customerId,
        backupCommand({ backupId: runId, serviceId: input.serviceId, volume: input.volume }),
        [volume(input.dockerVolume, VOLUME_MOUNT, true)],
      );
      check(result, `restic backup of ${input.volume}`);
      const summary = parseBackupSummary(result.stdout);
      if (!summary) throw new Error(`restic backup of ${input.volume} reported no snapshot`);
      return summary;
    },

    /** Restores a snapshot into an empty volume (never the live one: that is swapped afterwards). */
    async restoreInto(runId: string, customerId: string, snapshotId: string, dockerVolume: string) {
      check(
        await restic(runId, customerId, restoreCommand(snapshotId), [
          volume(dockerVolume, VOLUME_MOUNT, false),
        ]),
        `restic restore of snapshot ${snapshotId}`,
      );
    },

    /** Copies every file of `from` into `to` (modes, owners, times kept); `to` is emptied first. */
    async replaceContents(runId: string, from: string, to: string) {
      const mounts = [volume(from, '/from', true), volume(to, '/to', false)];
      check(
        await run(
          runId,
          ['find', '/to', '-mindepth', '1', '-maxdepth', '1', '-exec', 'rm', '-rf', '{}', '+'],
          mounts,
        ),
        `emptying ${to}`,
      );
      check(await run(runId, ['cp', '-a', '/from/.', '/to/'], mounts), `copying ${from} into ${to}`);
    },

    /**
     * A component's own command in a short-lived container of its image, on the mounts given
     * (a restore test's scratch volumes), with its limits and no network; labelled with the run so
     * an interrupted one is removed by `cleanUp`. `signal` kills it (a timeout).
     */
    runComponent: (
      runId: string,
      spec: Pick<EngineRun, 'image' | 'cmd' | 'env' | 'mounts'> & Required<Pick<EngineRun, 'component'>>,
      signal: AbortSignal,
    ) =>
      containers.run(
        {
          ...spec,
          name: `hostctl-backup-${runId.slice(0, 8)}-${(sequence += 1)}`,
          labels: { [RUN_LABEL]: runId },
        },
        signal,
      ),

    /** Raw restic on the repository, for the retention and check steps (retention.ts). */
    restic,

    ensureVolume: (name: string, labels: Record<string, string>) => containers.ensureVolume(name, labels),
    removeVolume: (name: string) => containers.removeVolume(name),

    /** The same steps on another target (a customer's own bucket), chosen once per run. */
    on: (other: BackupTarget) => createVolumeEngine({ ...deps, target: other }),
  };
}
export type VolumeEngine = ReturnType<typeof createVolumeEngine>;
