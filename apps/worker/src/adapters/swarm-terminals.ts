import type Docker from 'dockerode';
import { COMPONENT_LABEL, SERVICE_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import type { Terminals } from '../runtime/driver.js';
import { fail } from './docker-errors.js';
import { NODE_ENGINE_TIMEOUT_MS } from './swarm-node-engines.js';
import { swarmNames } from './swarm-spec.js';
import { createTaskEngines } from './swarm-task-engine.js';
import type { SwarmTask } from './swarm-tasks.js';
import { createTerminalExec, TerminalUnavailable, type TerminalExec } from './terminal-exec.js';

/**
 * Terminals under Swarm (docs/jobs.md#swarm): the exec opens on the node that runs a running task
 * of the component, through that node's engine: the manager's own for its tasks, else the one
 * SWARM_NODE_ENGINES names (`nodeSockets`), as the observers read usage there
 * (swarm-task-engine.ts). A task on a node the worker holds no engine of cannot have a terminal:
 * the reason says so, rather than the exec being tried on an engine that lacks the container.
 */
export function createSwarmTerminals(options: {
  docker: Docker;
  managerSocket: string;
  instance: string;
  /** SWARM_NODE_ENGINES: a node's hostname → its engine's socket. */
  nodeSockets: ReadonlyMap<string, string>;
}): Terminals {
  const { docker } = options;
  const nodes = new Map<string, TerminalExec>(
    [...options.nodeSockets].map(([hostname, socketPath]) => [
      hostname,
      createTerminalExec({
        socketPath,
        openTimeoutMs: NODE_ENGINE_TIMEOUT_MS,
        engineName: `node ${hostname}`,
      }),
    ]),
  );
  const engineOf = createTaskEngines(
    docker,
    createTerminalExec({ socketPath: options.managerSocket }),
    nodes,
  );

  return {
    async find(serviceId, component) {
      // Task label filters match the Swarm service's labels: the component's own, not its standby's
      // (labelled apart) nor a run's job (which carries no service label).
      const tasks = (await docker
        .listTasks({
          filters: {
            label: [`${SERVICE_LABEL}=${serviceId}`, `${COMPONENT_LABEL}=${component}`],
            'desired-state': ['running'],
          },
        })
        .catch(fail('cannot list Swarm tasks'))) as SwarmTask[];
      const chosen = tasks
        .filter(
          (task) =>
            task.Status?.State === 'running' &&
            task.Spec?.ContainerSpec?.Labels?.[STANDBY_LABEL] === undefined,
        )
        .sort((a, b) => (a.Slot ?? 0) - (b.Slot ?? 0) || a.ID.localeCompare(b.ID))[0];
      if (!chosen) throw new TerminalUnavailable(`no task of component ${component} is running`);
      // Docker's own name for a task's container on its node, as `docker ps` there shows it.
      const name = `${swarmNames(serviceId, options.instance).service(component)}.${chosen.Slot ?? 0}.${chosen.ID}`;
      return { id: chosen.ID, name };
    },

    async open(taskId, command, size) {
      const located = await engineOf(taskId);
      // Between find and open Swarm may have replaced the task (an update, a stop, its node lost).
      const state = located.task?.Status?.State;
      if (located.task && (located.task.DesiredState !== 'running' || state !== 'running'))
        throw new TerminalUnavailable(
          `task ${taskId} is not running (state ${state ?? '?'}, desired ${located.task.DesiredState ?? '?'})`,
        );
      if (!located.found) throw new TerminalUnavailable(located.reason);
      return located.engine.open(located.containerId, command, size);
    },
  };
}
