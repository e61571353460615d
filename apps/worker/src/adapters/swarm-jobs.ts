import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { DEPLOYMENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, RUN_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { PlanContainer } from '@hostctl/compose';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { OneOffJob, OneOffResult } from '../runtime/driver.js';
import { bounded } from '../runs/one-off-container.js';
import { fail, ignoreStatus } from './docker-errors.js';
import { demux } from './docker-runtime.js';
import type { RegistryAuth } from './registry-auth.js';
import { ensureOverlay } from './swarm-runtime.js';
import { swarmNames, swarmServiceSpec, type SwarmNames } from './swarm-spec.js';
import type { SwarmTask } from './swarm-tasks.js';

/** When the job's worker would have removed it at the latest (epoch ms): the sweep's cue. */
export const RUN_DEADLINE_LABEL = 'io.hostctl.run-deadline';
/** Past the deadline, how long a job may stay before the sweep takes it for a dead worker's. */
const SWEEP_GRACE_MS = 60_000;
/** Lines read back from the manager; more than fit in RUN_OUTPUT_MAX_BYTES of typical output. */
const OUTPUT_TAIL_LINES = 20_000;
/** Task states after which the job's task runs no more (Swarm's TaskState). */
const ENDED = new Set(['complete', 'failed', 'rejected', 'shutdown', 'orphaned', 'remove']);

/**
 * One-off commands as Swarm jobs (docs/jobs.md#swarm): a Swarm service of one task that is never
 * restarted (the job mode of API 1.41 cannot be removed cleanly here: swarmJobSpec), built from
 * the component's own spec (swarm-spec.ts), so it runs with the same image, variables, limits,
 * network, placement constraints and egress placement, and differs only in its command, its one
 * task run to completion, and its labels.
 * It carries no SERVICE_LABEL, so nothing that lists a service's components (observe, restarts,
 * updates, the observers, the log shipper) mistakes it for one; RUN_LABEL finds it instead.
 */
export interface SwarmJobs {
  run(job: OneOffJob): Promise<OneOffResult>;
  /** Removes the run's job, if any (a retried run whose worker died). */
  remove(runId: string): Promise<void>;
  /** Removes the jobs of dead workers (past their deadline); how many went. */
  sweep(): Promise<number>;
}

interface SwarmJobsOptions {
  socketPath: string;
  instance: string;
  registryAuth?: RegistryAuth;
  platformConstraints?: string[];
  encryptOverlays?: boolean;
  pollMs?: number;
  /** Seconds Swarm gives the task to stop once its job is removed (timeout, cancel). */
  stopGraceSeconds?: number;
}

/** The job's Swarm spec: the component's spec with the command, job mode and run labels. */
export function swarmJobSpec(
  container: PlanContainer,
  job: Pick<OneOffJob, 'serviceId' | 'releaseId' | 'plan' | 'command' | 'runId'>,
  context: {
    names: SwarmNames;
    image: string;
    volumeNode?: string;
    platformConstraints?: string[];
    deadline: number;
  },
): Docker.ServiceSpec {
  const { names } = context;
  const component = swarmServiceSpec(
    { ...container, image: context.image },
    { serviceId: job.serviceId, deploymentId: job.releaseId, plan: job.plan },
    {
      names,
      monitorMs: 0,
      ...(context.volumeNode ? { volumeNode: context.volumeNode } : {}),
      ...(context.platformConstraints ? { platformConstraints: context.platformConstraints } : {}),
    },
  );
  const template = component.TaskTemplate as Docker.ContainerTaskSpec;
  const { [SERVICE_LABEL]: _service, ...ownerLabels } = names.labels;
  const runLabels = {
    ...ownerLabels,
    [DEPLOYMENT_LABEL]: job.releaseId,
    [RUN_LABEL]: job.runId,
    [RUN_DEADLINE_LABEL]: String(context.deadline),
  };
  const containerSpec = { ...template.ContainerSpec };
  delete containerSpec.HealthCheck;
  return {
    // `--` never appears in a component's name (compose.parser.ts): no component's service is named so.
    Name: `${names.service('')}-run-${job.runId.replace(/-/g, '').slice(0, 12)}`,
    Labels: runLabels,
    TaskTemplate: {
      ...template,
      ContainerSpec: {
        ...containerSpec,
        Args: job.command,
        // Tenant labels first: a tenant label can never override the platform's.
        Labels: { ...container.labels, ...runLabels },
        Init: true,
      },
      RestartPolicy: { Condition: 'none' },
      // No alias: traffic for the component never reaches the command.
      Networks: [{ Target: names.network }],
    },
    // One task, never restarted, so it runs once to completion. Not `replicated-job` mode: on this
    // engine (20.10) removing a job service leaves its tasks behind for good (moby/moby#44312, fixed
    // in swarmkit#3112, 2023), and their network attachments then keep the service's overlay from
    // ever being removed. A replicated service's tasks go with it.
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

export function createSwarmJobs(docker: Docker, options: SwarmJobsOptions): SwarmJobs {
  const pollMs = options.pollMs ?? 300;
  const runFilter = (runId?: string) => ({
    label: [
      `${OWNER_LABEL}=true`,
      `${INSTANCE_LABEL}=${options.instance}`,
      runId ? `${RUN_LABEL}=${runId}` : RUN_LABEL,
    ],
  });
  const removeService = (id: string) =>
    docker
      .getService(id)
      .remove()
      .catch(ignoreStatus(404, fail(`cannot remove Swarm job ${id}`)));

  /** The serving Swarm service of the component: its image is the one the release runs, by digest. */
  async function componentService(names: SwarmNames, component: string) {
    const name = names.service(component);
    const [service] = (
      await docker.listServices({ filters: { name: [name] } }).catch(fail('cannot list Swarm services'))
    ).filter((item) => item.Spec?.Name === name);
    return service;
  }

  async function managerNode(): Promise<string | undefined> {
    const info = (await docker.info().catch(fail('cannot read the swarm manager'))) as {
      Swarm?: { NodeID?: string };
    };
    return info.Swarm?.NodeID || undefined;
  }

  async function outputOf(serviceId: string): Promise<string> {
    const raw = await (
      docker.getService(serviceId) as unknown as {
        logs(options: object): Promise<Buffer>;
      }
    )
      .logs({ stdout: true, stderr: true, follow: false, tail: OUTPUT_TAIL_LINES })
      .catch(() => Buffer.alloc(0));
    return demux(raw);
  }

  return {
    async run(job) {
      const names = swarmNames(job.serviceId, options.instance);
      const componentName =
        job.component ?? job.plan.web?.container ?? job.plan.containers[0]?.name ?? '(none)';
      const container = job.plan.containers.find((item) => item.name === componentName);
      if (!container)
        throw new PermanentStepError(
          `the release has no component named ${componentName} to run the command in`,
        );
      const serving = await componentService(names, container.name);
      const template = serving?.Spec?.TaskTemplate;
      const servingTemplate = template && 'ContainerSpec' in template ? template : undefined;
      // A run of the serving release takes the image its tasks run (pushed for the nodes, by
      // digest); a release command, whose release runs nowhere yet, the plan's (distributed already).
      const isServingRelease = serving?.Spec?.Labels?.[DEPLOYMENT_LABEL] === job.releaseId;
      const image = (isServingRelease && servingTemplate?.ContainerSpec?.Image) || container.image;
      // A component with volumes runs where they are: the node its service is pinned to, or (no
      // release yet: a first deploy's release command) the manager, where up() will pin it too.
      const pinned = servingTemplate?.Placement?.Constraints?.find((item) => item.startsWith('node.id=='));
      const volumeNode = pinned
        ? pinned.slice('node.id=='.length)
        : container.volumes.length > 0
          ? await managerNode()
          : undefined;
      const deadline = Date.now() + job.timeoutMs;
      const spec = swarmJobSpec(container, job, {
        names,
        image,
        deadline: deadline + (options.stopGraceSeconds ?? 10) * 1000,
        ...(volumeNode ? { volumeNode } : {}),
        ...(options.platformConstraints ? { platformConstraints: options.platformConstraints } : {}),
      });
      await ensureOverlay(docker, names, options.encryptOverlays);
      // A retried attempt finds its own leftover under the same name.
      for (const leftover of await docker.listServices({ filters: runFilter(job.runId) }))
        await removeService(leftover.ID);
      const created = (await (
        options.registryAuth ? docker.createService(options.registryAuth, spec) : docker.createService(spec)
      ).catch(fail(`cannot create Swarm job ${spec.Name}`))) as { id?: string; ID?: string };
      const id = created.id ?? created.ID ?? spec.Name!;
      try {
        let task: SwarmTask | undefined;
        let isAttached = false;
        while (Date.now() < deadline && !job.signal?.aborted) {
          [task] = (await docker
            .listTasks({ filters: { service: [id] } })
            .catch(fail(`cannot list the tasks of ${spec.Name}`))) as SwarmTask[];
          // Once the task has a container: the manager has no logs of a task not started yet.
          const hasStarted =
            task && (task.Status?.State === 'running' || ENDED.has(task.Status?.State ?? ''));
          if (task && hasStarted && !isAttached && job.live) {
            // The manager replays a task's output from its start, so what came before is not lost.
            await job.live.attach(task.ID);
            isAttached = true;
          }
          if (task && ENDED.has(task.Status?.State ?? '')) break;
          await sleep(pollMs);
        }
        const state = task?.Status?.State ?? '';
        // A task that failed without its command failing (it never started: no exit code, or 0).
        const exitCode = task?.Status?.ContainerStatus?.ExitCode;
        if (state === 'rejected' || (state === 'failed' && !exitCode))
          throw new PermanentStepError(
            `Swarm ${state} the job's task: ${task?.Status?.Err ?? 'no reason given'}`,
          );
        const timedOut = !ENDED.has(state) && !job.signal?.aborted;
        await job.live?.drain();
        const { output, truncated } = bounded(job.redact(await outputOf(id)));
        return {
          exitCode: ENDED.has(state) ? (exitCode ?? null) : null,
          timedOut,
          output,
          outputTruncated: truncated,
        };
      } finally {
        // Removing the job stops its task (timeout, cancel) and is the end of it either way.
        await removeService(id);
      }
    },

    async remove(runId) {
      for (const service of await docker
        .listServices({ filters: runFilter(runId) })
        .catch(fail('cannot list Swarm jobs')))
        await removeService(service.ID);
    },

    async sweep() {
      let removed = 0;
      for (const service of await docker
        .listServices({ filters: runFilter() })
        .catch(fail('cannot list Swarm jobs'))) {
        const deadline = Number(service.Spec?.Labels?.[RUN_DEADLINE_LABEL] ?? 0);
        if (Date.now() < deadline + SWEEP_GRACE_MS) continue;
        await removeService(service.ID);
        removed += 1;
      }
      return removed;
    },
  };
}
