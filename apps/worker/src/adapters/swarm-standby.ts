import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { DEPLOYMENT_LABEL, INSTANCE_LABEL, SERVICE_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import type { PlanContainer } from '@hostctl/compose';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { messageOf } from '../pipeline/step-errors.js';
import { fail, ignoreStatus } from './docker-errors.js';
import type { RegistryAuth } from './registry-auth.js';
import { swarmNames } from './swarm-spec.js';
import type { SwarmTask } from './swarm-tasks.js';

/**
 * A standby: a copy of the serving release's web component, held while Swarm updates it.
 *
 * Why: Swarm stops the old task as soon as the new one runs, then watches the new one for its
 * monitor period. A release that crashes within it is rolled back, but the old release must start
 * again from nothing first, and every request fails meanwhile (measured: 573 of 2,139 and 675 of
 * 4,161 requests, where the single engine, whose old set still runs, lost 24 of 2,164). The
 * standby is one more task of the old release, started before the update and routed with the
 * other running tasks (every running web task has an endpoint), so the proxy always has a task of
 * a release that worked. It goes once the release is decided: once the proxy is routed to the new
 * release's tasks, or once the rolled-back tasks run when it failed. The reconciler removes one
 * whose deployment died.
 */
export interface SwarmStandby {
  /**
   * Starts the standby of the service's web component, unless one runs, and waits until its task
   * runs. Resolves false, with the reason in the log, when there is nothing to hold (a first
   * release, an update already written, stop-first) or it did not run in time: the release goes on
   * without one.
   */
  hold(
    serviceId: string,
    web: PlanContainer,
    deploymentId: string,
    log: DeployLog,
    signal?: AbortSignal,
  ): Promise<boolean>;
  /** Removes the service's standby (its task stops in the background); removing none is success. */
  release(serviceId: string): Promise<void>;
  /** hostctl service ids of the installation that have a standby (a dead deployment's, maybe). */
  held(): Promise<string[]>;
}

export interface SwarmStandbyOptions {
  instance: string;
  /** How long a standby may take to run (the release's readiness timeout). */
  timeoutMs: number;
  registryAuth?: RegistryAuth;
  pollMs?: number;
}

/** Why a component gets no standby, or null: two writers on one volume are worse than a gap. */
export function standbyRefusal(web: PlanContainer): string | null {
  if (web.updateOrder === 'stop-first') return `${web.name} is replaced stop-first`;
  if (web.volumes.length > 0 && web.updateOrder !== 'start-first')
    return `${web.name} mounts a volume (deploy.update_config.order: start-first allows one)`;
  return null;
}

/** The standby's spec: the serving web component's, one replica, never restarted, labelled apart. */
export function standbySpec(serving: Docker.ServiceSpec, name: string): Docker.ServiceSpec {
  const template = serving.TaskTemplate as Docker.ContainerTaskSpec;
  return {
    Name: name,
    Labels: { ...serving.Labels, [STANDBY_LABEL]: 'true' },
    TaskTemplate: {
      ...template,
      ContainerSpec: {
        ...template.ContainerSpec,
        Labels: { ...template.ContainerSpec?.Labels, [STANDBY_LABEL]: 'true' },
      },
      // A standby that dies is not worth a restart: the release goes on with what runs.
      RestartPolicy: { Condition: 'none' },
    },
    Mode: { Replicated: { Replicas: 1 } },
    ...(serving.EndpointSpec ? { EndpointSpec: serving.EndpointSpec } : {}),
  };
}

/** Task states a task of the standby never leaves (its restart condition is `none`). */
const ENDED = new Set(['failed', 'rejected', 'shutdown', 'complete', 'orphaned', 'remove']);

export function createSwarmStandby(docker: Docker, options: SwarmStandbyOptions): SwarmStandby {
  const pollMs = options.pollMs ?? 250;
  const byName = async (name: string) =>
    (await docker.listServices({ filters: { name: [name] } }).catch(fail('cannot list Swarm services'))).find(
      (service) => service.Spec?.Name === name,
    );
  /** Whether the standby runs, ended (it is never restarted: its task's error) or is still coming. */
  const standbyState = async (
    name: string,
  ): Promise<{ state: 'running' | 'pending' } | { state: 'failed'; error: string }> => {
    const tasks = (await docker
      .listTasks({ filters: { service: [name] } })
      .catch(fail(`cannot list the tasks of ${name}`))) as SwarmTask[];
    if (tasks.some((task) => task.Status?.State === 'running')) return { state: 'running' };
    const ended = tasks.find((task) => ENDED.has(task.Status?.State ?? ''));
    if (!ended) return { state: 'pending' };
    return { state: 'failed', error: ended.Status?.Err || ended.Status?.Message || 'no reason given' };
  };
  const remove = async (name: string) => {
    const service = await byName(name);
    if (service)
      await docker
        .getService(service.ID)
        .remove()
        .catch(ignoreStatus(404, fail(`cannot remove ${name}`)));
  };

  async function hold(
    serviceId: string,
    web: PlanContainer,
    deploymentId: string,
    log: DeployLog,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const names = swarmNames(serviceId, options.instance);
    const refusal = standbyRefusal(web);
    if (refusal) {
      await log.info(`No standby of the serving release: ${refusal}`);
      return false;
    }
    if (!(await byName(names.standby))) {
      const serving = await byName(names.service(web.name));
      // A retried job may find the update written already: the serving spec is gone then. A
      // stopped service (no replicas) serves nothing a standby could stand in for.
      if (!serving?.Spec || serving.Spec.Labels?.[DEPLOYMENT_LABEL] === deploymentId) return false;
      if (serving.Spec.Mode?.Replicated?.Replicas === 0) return false;
      const spec = standbySpec(serving.Spec, names.standby);
      await (
        options.registryAuth ? docker.createService(options.registryAuth, spec) : docker.createService(spec)
      ).catch(ignoreStatus(409, fail(`cannot create Swarm service ${names.standby}`)));
    }
    const deadline = Date.now() + options.timeoutMs;
    let why = `it did not run within ${options.timeoutMs} ms`;
    while (Date.now() < deadline) {
      signal?.throwIfAborted();
      const now = await standbyState(names.standby);
      if (now.state === 'running') {
        await log.info(
          `Standby of the serving release runs (${names.standby}) while Swarm updates ${web.name}`,
        );
        return true;
      }
      if (now.state === 'failed') {
        why = `its task ended (${now.error})`;
        break;
      }
      await sleep(pollMs);
    }
    await remove(names.standby).catch((error: unknown) =>
      log.info(`Could not remove the standby that did not run: ${messageOf(error)}`),
    );
    await log.info(`No standby of the serving release: ${why}`);
    return false;
  }

  return {
    hold,
    // Like the old task Swarm stops in an update: its task gets the stop grace period to finish
    // what it was sent, and the release does not wait for it (seen: 2 to 7 s more per release).
    release: (serviceId) => remove(swarmNames(serviceId, options.instance).standby),
    async held() {
      const services = await docker
        .listServices({
          filters: { label: [`${INSTANCE_LABEL}=${options.instance}`, `${STANDBY_LABEL}=true`] },
        })
        .catch(fail('cannot list Swarm services'));
      return services
        .map((service) => service.Spec?.Labels?.[SERVICE_LABEL])
        .filter((id): id is string => Boolean(id));
    },
  };
}
