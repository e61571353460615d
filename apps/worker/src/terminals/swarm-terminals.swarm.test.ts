// Issue 32 item 5, "exec on the node that runs the task", on two real Swarm nodes in network
// namespaces (testing/netns-swarm.ts): the terminal of a task on the manager's node opens on the
// manager's engine, the one of a task on node 2 on node 2's engine as SWARM_NODE_ENGINES names it,
// and without that engine, or once no task runs, the terminal is refused with the reason. The
// single node of the e2e suite (tests/e2e/src/swarm-exec-terminal.test.ts) only has the first.
import { randomUUID } from 'node:crypto';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { swarmNames } from '../adapters/swarm-spec.js';
import { createSwarmTerminals } from '../adapters/swarm-terminals.js';
import { TerminalUnavailable, type ExecProcess } from '../adapters/terminal-exec.js';
import { uniquePrefix } from '../testing/fixtures.js';
import { startNetnsSwarm, type NetnsSwarm, type SwarmNode } from '../testing/netns-swarm.js';
import { TEST_IMAGE } from '../testing/test-env.js';

const instance = uniquePrefix('swarm-terminals');
const serviceId = randomUUID();
let swarm: NetnsSwarm;
let service: Docker.Service;
/** Node id → the node, read while both are alive. */
const nodeById = new Map<string, SwarmNode>();

interface Task {
  ID: string;
  NodeID: string;
  Slot: number;
  Status: { State: string; ContainerStatus?: { ContainerID?: string } };
}

beforeAll(async () => {
  swarm = await startNetnsSwarm({ nodes: 2, images: [TEST_IMAGE] });
  for (const node of swarm.nodes) {
    const info = (await node.docker.info()) as { Swarm: { NodeID: string } };
    nodeById.set(info.Swarm.NodeID, node);
  }
  // Named and labelled as swarm-spec.ts names and labels a component's Swarm service.
  const labels = {
    [OWNER_LABEL]: 'true',
    [INSTANCE_LABEL]: instance,
    [SERVICE_LABEL]: serviceId,
    [COMPONENT_LABEL]: 'web',
  };
  service = await swarm.manager.createService({
    Name: swarmNames(serviceId, instance).service('web'),
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: { Image: TEST_IMAGE, Labels: labels, Command: ['sleep', '3600'] },
      // One task per node.
      Placement: { MaxReplicas: 1 },
    },
    Mode: { Replicated: { Replicas: 2 } },
  });
}, 180_000);

afterAll(async () => {
  await swarm?.close();
}, 120_000);

/** The worker's terminals, holding node 2's engine when `withNode2Engine` (SWARM_NODE_ENGINES). */
const terminals = (withNode2Engine: boolean) => {
  const second = swarm.nodes[1]!;
  return createSwarmTerminals({
    docker: swarm.manager,
    managerSocket: swarm.nodes[0]!.socketPath,
    instance,
    nodeSockets: withNode2Engine ? new Map([[second.hostname, second.socketPath]]) : new Map(),
  });
};

async function runningTasks(): Promise<Task[]> {
  const tasks = (await swarm.manager.listTasks({
    filters: { service: [service.id], 'desired-state': ['running'] },
  })) as Task[];
  return tasks.filter((task) => task.Status.State === 'running');
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Reads the exec's TTY to its end, then its exit code (recorded a moment after the stream ends). */
async function finish(process: ExecProcess): Promise<{ output: string; exitCode: number | null }> {
  let output = '';
  process.stream.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise((resolve) => {
    process.stream.once('end', resolve);
    process.stream.once('close', resolve);
  });
  const exitCode = await until('the exit code', async () => (await process.exitCode()) ?? undefined, 5000);
  return { output, exitCode };
}

describe('terminals on two Swarm nodes', () => {
  it('opens each task’s terminal on the engine of the node that runs it', async () => {
    const tasks = await until('a running task on each node', async () => {
      const running = await runningTasks();
      return new Set(running.map((task) => task.NodeID)).size === 2 ? running : undefined;
    });
    for (const task of tasks) {
      const node = nodeById.get(task.NodeID)!;
      const process = await terminals(true).open(task.ID, ['sh', '-c', 'echo "on $(hostname)"; exit 3']);
      const { output, exitCode } = await finish(process);
      // A container's hostname is its short id: the exec ran in that task's container.
      expect(output).toContain(`on ${task.Status.ContainerStatus!.ContainerID!.slice(0, 12)}`);
      expect(exitCode).toBe(3);
      // And that container lives on the task's node, under the name the terminal records.
      const [container] = await node.docker.listContainers({
        filters: { id: [task.Status.ContainerStatus!.ContainerID!] },
      });
      expect(container?.Names).toEqual([
        `/${swarmNames(serviceId, instance).service('web')}.${task.Slot}.${task.ID}`,
      ]);
    }
    const found = await terminals(true).find(serviceId, 'web');
    expect(tasks.map((task) => task.ID)).toContain(found.id);
    expect(found.name).toBe(
      `${swarmNames(serviceId, instance).service('web')}.${Math.min(...tasks.map((task) => task.Slot))}.${found.id}`,
    );
  });

  it('refuses a task on a node whose engine is not in SWARM_NODE_ENGINES, naming the node', async () => {
    const second = swarm.nodes[1]!;
    const remote = (await runningTasks()).find((task) => nodeById.get(task.NodeID) === second)!;
    const refused = terminals(false).open(remote.ID, ['true']);
    await expect(refused).rejects.toBeInstanceOf(TerminalUnavailable);
    await expect(refused).rejects.toThrow(
      `task ${remote.ID} runs on node ${second.hostname}, whose engine is not in SWARM_NODE_ENGINES`,
    );
    // The manager's own tasks need no listed engine.
    const local = (await runningTasks()).find((task) => nodeById.get(task.NodeID) === swarm.nodes[0])!;
    expect((await finish(await terminals(false).open(local.ID, ['sh', '-c', 'exit 0']))).exitCode).toBe(0);
  });

  it('refuses once no task runs: the component’s (find) and a task just stopped (open)', async () => {
    const [stopping] = await runningTasks();
    const info = (await service.inspect()) as { Version: { Index: number }; Spec: Docker.ServiceSpec };
    await service.update({
      ...info.Spec,
      version: info.Version.Index,
      Mode: { Replicated: { Replicas: 0 } },
    });
    await until('no running task', async () => ((await runningTasks()).length === 0 ? true : undefined));
    await expect(terminals(true).find(serviceId, 'web')).rejects.toThrow(
      'no task of component web is running',
    );
    // Swarm wants it gone (scaled down: `remove`), whether or not its container has stopped yet.
    const refused = terminals(true).open(stopping!.ID, ['true']);
    await expect(refused).rejects.toBeInstanceOf(TerminalUnavailable);
    await expect(refused).rejects.toThrow(
      new RegExp(`task ${stopping!.ID} is not running \\(state \\w+, desired (remove|shutdown)\\)`),
    );
  });
});
