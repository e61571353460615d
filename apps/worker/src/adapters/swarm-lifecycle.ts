import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import type { Plan } from '@hostctl/compose';
import { COMPONENT_LABEL, DomainError, type LifecycleAction } from '@hostctl/domain';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { createDockerClient } from './docker-client.js';
import { fail } from './docker-errors.js';
import type { SwarmRuntimeOptions } from './swarm-runtime.js';
import { swarmNames } from './swarm-spec.js';
import { updateSwarmService } from './swarm-update.js';
import { isStandby, type SwarmTask } from './swarm-tasks.js';

/**
 * stop/start/restart under RUNTIME=swarm. Stopping a task's container would only make Swarm start
 * another, so the Swarm services are scaled instead: stop → 0 replicas, start → the plan's
 * replicas, restart → a forced update (new tasks, the update config's order). Each waits until
 * Swarm has done it, so the service's status says what runs.
 */
export interface SwarmLifecycle {
  perform(serviceId: string, action: LifecycleAction, plan: Plan | undefined): Promise<void>;
}

/** The swarm driver's settings but its update monitor (scaling is no update to watch). */
export type SwarmLifecycleOptions = Omit<SwarmRuntimeOptions, 'monitorMs'>;

export function createSwarmLifecycle(options: SwarmLifecycleOptions): SwarmLifecycle {
  const docker = createDockerClient(options.socketPath);
  const pollMs = options.pollMs ?? 500;

  // Whatever the desired state: a task told to shut down still runs until its container stopped.
  const running = async (serviceName: string): Promise<SwarmTask[]> =>
    (
      (await docker
        .listTasks({ filters: { service: [serviceName] } })
        .catch(fail(`cannot list the tasks of ${serviceName}`))) as SwarmTask[]
    ).filter((task) => task.Status?.State === 'running');

  // With the worker's registry credentials: a start or restart pulls with the current password.
  const update = (id: string, change: (spec: Docker.ServiceSpec) => Docker.ServiceSpec) =>
    updateSwarmService(
      docker,
      id,
      (current) => change(current.Spec ?? {}),
      `update Swarm service ${id}`,
      options.registryAuth,
    );

  async function settle(name: string, done: (tasks: SwarmTask[]) => boolean, what: string) {
    const deadline = Date.now() + options.timeoutMs;
    while (Date.now() < deadline) {
      if (done(await running(name))) return;
      await sleep(pollMs);
    }
    throw new PermanentStepError(`${name} did not ${what} within ${options.timeoutMs} ms`);
  }

  return {
    async perform(serviceId, action, plan) {
      const names = swarmNames(serviceId, options.instance);
      // A standby only lives during a deployment, which holds the lock a lifecycle job waits for:
      // one found here is a dead deployment's, for the reconciler to remove, not a component.
      const services = (
        await docker
          .listServices({
            filters: { label: Object.entries(names.selector).map(([key, value]) => `${key}=${value}`) },
          })
          .catch(fail('cannot list Swarm services'))
      ).filter((service) => !isStandby(service));
      if (services.length === 0) {
        if (action === 'stop') return;
        throw new PermanentStepError('the service has no Swarm services to start; redeploy it');
      }
      for (const service of services) {
        const name = service.Spec?.Name ?? service.ID;
        const component = service.Spec?.Labels?.[COMPONENT_LABEL] ?? '';
        const replicas = plan?.containers.find((container) => container.name === component)?.replicas ?? 1;
        if (action === 'stop') {
          await update(service.ID, (spec) => ({ ...spec, Mode: { Replicated: { Replicas: 0 } } }));
          await settle(name, (tasks) => tasks.length === 0, 'stop its tasks');
          continue;
        }
        const before = new Set((await running(name)).map((task) => task.ID));
        await update(service.ID, (spec) => ({
          ...spec,
          Mode: { Replicated: { Replicas: replicas } },
          // restart: new tasks even though nothing else changed.
          ...(action === 'restart' ? { TaskTemplate: forced(spec.TaskTemplate) } : {}),
        }));
        await settle(
          name,
          (tasks) =>
            tasks.length >= replicas && (action !== 'restart' || tasks.every((task) => !before.has(task.ID))),
          `run ${replicas} new task(s)`,
        );
      }
    },
  };
}

function forced(template: Docker.ServiceSpec['TaskTemplate']): Docker.ServiceSpec['TaskTemplate'] {
  if (!template) throw new DomainError('runtime_error', 'the Swarm service has no task template');
  return { ...template, ForceUpdate: (template.ForceUpdate ?? 0) + 1 };
}
