// The two-node proof (issue 17, docs/multi-host.md#what-the-two-node-test-shows): a real Swarm of two
// engines in network namespaces. Services spread over both nodes and answer through the platform's
// Caddy; the nodes API's snapshot shows where each task runs; drain (through the same store and
// job processor the API and worker use) empties a node; a killed node's tasks are rescheduled
// and the service answers again: the time it took is printed, as the figure the docs report.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Job } from 'bullmq';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { createNodesStore, createWorkerNodesStore, type Db, type NodeWithTasks } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { createCaddyRoutes } from '../adapters/caddy-routes.js';
import { createNodeEngines } from '../adapters/swarm-node-engines.js';
import { createSwarmNodes } from '../adapters/swarm-nodes.js';
import { createSwarmObservation } from '../adapters/swarm-telemetry.js';
import { createNodeCommand } from '../adapters/node-command.js';
import { createNodesEgress } from '../egress/node-egress.js';
import {
  createEgressNodeMarker,
  EGRESS_NODE_LABEL,
  EGRESS_PLACEMENT,
} from '../adapters/swarm-egress-label.js';
import { probeFrom } from '../testing/egress-probe.js';
import { createTestDb, silentLogger, uniquePrefix } from '../testing/fixtures.js';
import { startNetnsSwarm, type NetnsSwarm } from '../testing/netns-swarm.js';
import { CADDY_ADMIN_URL, viaCaddy } from '../testing/network-fixtures.js';
import { TEST_IMAGE } from '../testing/test-env.js';
import { createNodeAvailabilityProcessor } from './node-availability.processor.js';

const run = promisify(execFile);
const instance = uniquePrefix('swarm-nodes');
const serviceId = randomUUID();
const host = `swn-${serviceId.slice(0, 8)}.apps.localhost`;
let swarm: NetnsSwarm;
let db: Db;
let service: Docker.Service;
/** Engine node id → the address the host reaches it by (read while every node is alive). */
const nodeAddress = new Map<string, string>();
const caddy = createCaddyRoutes({ adminUrl: CADDY_ADMIN_URL, serverName: 'hostctl', instance });

beforeAll(async () => {
  db = createTestDb();
  swarm = await startNetnsSwarm({ nodes: 2, images: [TEST_IMAGE] });
  // On an overlay network of its own, as every hostctl service: its tasks then leave the overlay
  // through their node's docker_gwbridge (a task on no network would sit on docker0).
  const network = await swarm.manager.createNetwork({
    Name: `hostctl-swn-${serviceId.slice(0, 8)}`,
    Driver: 'overlay',
  });
  for (const node of swarm.nodes) {
    const info = (await node.docker.info()) as { Swarm: { NodeID: string } };
    nodeAddress.set(info.Swarm.NodeID, node.hostAddress);
  }
  service = await swarm.manager.createService({
    Name: `hostctl-swn-${serviceId.slice(0, 8)}`,
    Labels: { [OWNER_LABEL]: 'true', [INSTANCE_LABEL]: instance, [SERVICE_LABEL]: serviceId },
    TaskTemplate: {
      ContainerSpec: {
        Image: TEST_IMAGE,
        Labels: { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId, [COMPONENT_LABEL]: 'web' },
        // Each task answers with its container's hostname, so an answer names the task it came from.
        Command: ['sh', '-c', 'mkdir -p /w && hostname > /w/index.html && exec httpd -f -p 8080 -h /w'],
      },
      RestartPolicy: { Condition: 'any', Delay: 1_000_000_000 },
      Networks: [{ Target: network.id }],
    },
    Mode: { Replicated: { Replicas: 2 } },
    // No IPVS here: DNS round robin, and each task publishes on its own node (a random port).
    EndpointSpec: { Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishMode: 'host' }] },
  });
}, 180_000);

afterAll(async () => {
  await caddy.remove(serviceId).catch(() => undefined);
  await db?.nodeTask.deleteMany({ where: { instance } });
  await swarm?.close();
  await db?.$disconnect();
}, 120_000);

const swarmNodes = () => createSwarmNodes(swarm.manager, instance);
const observe = async () => {
  const { nodes, tasks } = await swarmNodes().observe();
  await createWorkerNodesStore(db, instance).replaceSnapshot(nodes, tasks, new Date());
  const engineIds = new Set(nodes.map((node) => node.engineId));
  return (await createNodesStore(db, instance).list()).filter((node) => engineIds.has(node.engineId));
};
/** An HTTP GET from node 1's network namespace (a source other than the proxy's); '' when unanswered. */
const fromNode1 = (address: string, port: string): Promise<string> =>
  run('nsenter', [
    `--net=/run/netns/${swarm.nodes[0]!.netns}`,
    'curl',
    '-s',
    '-m',
    '3',
    `http://${address}:${port}/`,
  ]).then(
    (result) => result.stdout,
    () => '',
  );

/** The observers' view through the manager, reading node 2's engine too when `withNode2Engine`. */
const observation = (withNode2Engine: boolean) =>
  createSwarmObservation({
    socketPath: swarm.nodes[0]!.socketPath,
    ...(withNode2Engine
      ? { nodeEngines: createNodeEngines(new Map([[swarm.nodes[1]!.hostname, swarm.nodes[1]!.socketPath]])) }
      : {}),
  });
const nodeNamed = (nodes: NodeWithTasks[], index: number) =>
  nodes.find((node) => node.hostname === swarm.nodes[index - 1]!.hostname)!;
const running = (node: NodeWithTasks) => node.tasks.filter((task) => task.state === 'running');

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The published host-mode port of each running task, with its node's address and container. */
async function endpoints(): Promise<{ node: string; upstream: string; container: string }[]> {
  const tasks = (await swarm.manager.listTasks({
    filters: { service: [service.id], 'desired-state': ['running'] },
  })) as {
    NodeID: string;
    Status: {
      State: string;
      ContainerStatus?: { ContainerID?: string };
      PortStatus?: { Ports?: { PublishedPort?: number }[] };
    };
  }[];
  return tasks
    .filter((task) => task.Status.State === 'running' && task.Status.PortStatus?.Ports?.[0]?.PublishedPort)
    .map((task) => ({
      node: task.NodeID,
      upstream: `${nodeAddress.get(task.NodeID)}:${task.Status.PortStatus!.Ports![0]!.PublishedPort}`,
      container: (task.Status.ContainerStatus?.ContainerID ?? '').slice(0, 12),
    }));
}

/** Routes the service's host to one task (as the router would) and asks Caddy. */
async function answerThroughCaddy(endpoint: { upstream: string; container: string }): Promise<boolean> {
  await caddy.apply({ serviceId, hosts: [host], upstreams: [endpoint.upstream] });
  const answer = await viaCaddy(host);
  return answer.status === 200 && answer.body.trim() === endpoint.container;
}

async function setAvailability(nodeId: string, availability: 'active' | 'drain') {
  expect(await createNodesStore(db, instance).requestAvailability(nodeId, availability)).not.toBeNull();
  const processor = createNodeAvailabilityProcessor({
    swarm: swarmNodes(),
    store: createWorkerNodesStore(db, instance),
    refresh: async () => void (await observe()),
    logger: silentLogger,
  });
  const job = { data: { nodeId }, attemptsMade: 0, opts: { attempts: 3 } };
  await processor(job as Job<JobPayload<'node-availability'>>);
}

describe('two Swarm nodes in network namespaces', () => {
  it('spreads the replicas over both nodes, and the nodes snapshot shows where each runs', async () => {
    const nodes = await until('a running task on each node', async () => {
      const observed = await observe();
      return observed.length === 2 && observed.every((node) => running(node).length === 1)
        ? observed
        : undefined;
    });
    const [first, second] = [nodeNamed(nodes, 1), nodeNamed(nodes, 2)];
    expect(first).toMatchObject({ role: 'manager', state: 'ready', availability: 'active' });
    expect(second).toMatchObject({ role: 'worker', state: 'ready', availability: 'active' });
    expect(Number(second.nanoCpus)).toBeGreaterThan(0);
    expect(running(first)[0]).toMatchObject({ serviceId, component: 'web', instance });
    expect(running(second)[0]).toMatchObject({ serviceId, component: 'web', instance });
    expect(await createNodesStore(db, instance).placementOf(serviceId)).toHaveLength(2);
  });

  it('each node’s task answers through the platform proxy', async () => {
    const tasks = await endpoints();
    expect(new Set(tasks.map((task) => task.node)).size).toBe(2);
    for (const task of tasks) expect(await answerThroughCaddy(task)).toBe(true);
  });

  it('reads the usage and disk of a task on another node from that node’s engine (SWARM_NODE_ENGINES)', async () => {
    const second = swarm.nodes[1]!;
    const [managerOnly, withEngines] = [observation(false), observation(true)];
    const secondNodeId = [...nodeAddress].find(([, address]) => address === second.hostAddress)![0];
    const tasks = (await swarm.manager.listTasks({
      filters: { service: [service.id], 'desired-state': ['running'] },
    })) as { ID: string; NodeID: string; Status: { ContainerStatus?: { ContainerID?: string } } }[];
    const remote = tasks.find((task) => task.NodeID === secondNodeId)!;
    const local = tasks.find((task) => task.NodeID !== secondNodeId)!;

    expect(await managerOnly.telemetry.sampleUsage(remote.ID)).toBeNull();
    const sample = await withEngines.telemetry.sampleUsage(remote.ID);
    expect(sample?.memoryBytes).toBeGreaterThan(0);
    // The task has no memory limit: its node's memory as "limit" must not read as one.
    expect(sample?.memoryLimitBytes).toBe(Number.POSITIVE_INFINITY);
    expect((await withEngines.telemetry.sampleUsage(local.ID))?.memoryBytes).toBeGreaterThan(0);

    const containersOf = async (observed: typeof managerOnly) =>
      (await observed.telemetry.diskUsage()).containers
        .filter((container) => container.labels[SERVICE_LABEL] === serviceId)
        .map((container) => container.id);
    const remoteContainer = remote.Status.ContainerStatus!.ContainerID!;
    expect(await containersOf(managerOnly)).not.toContain(remoteContainer);
    expect(await containersOf(withEngines)).toContain(remoteContainer);
    expect(await containersOf(withEngines)).toContain(local.Status.ContainerStatus!.ContainerID!);
  });

  it('installs the egress policy on the other node through its engine: its task no longer reaches that node', async () => {
    const second = swarm.nodes[1]!;
    const secondNodeId = [...nodeAddress].find(([, address]) => address === second.hostAddress)![0];
    const task = (await endpoints()).find((endpoint) => endpoint.node === secondNodeId)!;
    // The task's own port published on its node: a local address of the node, as its host's
    // services are. The answer names the task, so "reached" cannot be anything else.
    const probe = async () =>
      (await probeFrom(second.docker, task.container, task.upstream.replace(':', ' '), task.container))
        .reached;
    expect(await probe()).toBe(true);
    // The same port dialled from node 1 (not the proxy's address): open, as Docker leaves it.
    const port = task.upstream.split(':')[1]!;
    expect(await fromNode1(second.swarmAddress, port)).toContain(task.container);

    // A service placed as hostctl places them under EGRESS_POLICY=enforce waits for a protected node.
    const guarded = await swarm.manager.createService({
      Name: `hostctl-swg-${serviceId.slice(0, 8)}`,
      TaskTemplate: {
        ContainerSpec: { Image: TEST_IMAGE, Command: ['sleep', '3600'] },
        Placement: { Constraints: [EGRESS_PLACEMENT] },
      },
      Mode: { Replicated: { Replicas: 1 } },
    });
    const guardedTasks = async () =>
      (await swarm.manager.listTasks({ filters: { service: [guarded.id] } })) as {
        NodeID?: string;
        Status: { State: string; Err?: string };
      }[];
    await until('the guarded task to wait for a protected node', async () =>
      (await guardedTasks()).some((item) => /constraint/i.test(item.Status.Err ?? '')) ? true : undefined,
    );

    const warnings: string[] = [];
    const egress = createNodesEgress({
      sockets: new Map([[second.hostname, second.socketPath]]),
      image: TEST_IMAGE,
      denyCidrs: '',
      // The proxy (Caddy on the host) reaches node 2 from the host's end of their link.
      proxySources: [second.hostLinkAddress],
      logger: {
        ...silentLogger,
        warn: (...args: unknown[]) => void warnings.push(JSON.stringify(args)),
      } as never,
      recheckMs: 0,
      markNode: createEgressNodeMarker(swarmNodes()),
    });
    await egress.ensure();
    expect(warnings).toEqual([]);
    expect(await probe()).toBe(false);
    // Published task ports answer the proxy only.
    expect(await fromNode1(second.swarmAddress, port)).toBe('');
    expect(await answerThroughCaddy(task)).toBe(true);
    // Labelled once its rules are in: the guarded task runs there, and only there.
    expect(nodeNamed(await observe(), 2).labels).toMatchObject({ [EGRESS_NODE_LABEL]: 'enforced' });
    const placed = await until('the guarded task to run on the protected node', async () =>
      (await guardedTasks()).find((item) => item.Status.State === 'running'),
    );
    expect(placed.NodeID).toBe(secondNodeId);
    await guarded.remove();

    // Idempotent: a second sweep adds no second jump.
    await egress.ensure();
    const { stdout } = await run('nsenter', [`--net=/run/netns/${second.netns}`, 'iptables', '-w', '-S']);
    const rules = stdout.split('\n');
    expect(
      rules.filter((rule) => rule === '-A DOCKER-USER -i docker_gwbridge -j HOSTCTL-EGRESS'),
    ).toHaveLength(1);
    expect(rules.filter((rule) => rule === '-A INPUT -i docker_gwbridge -j HOSTCTL-HOST')).toHaveLength(1);
    expect(
      rules.filter((rule) => rule === '-A DOCKER-USER -o docker_gwbridge -j HOSTCTL-PUBLISHED'),
    ).toHaveLength(1);
    // Nothing of the node commands is left on the node; one a dead worker left goes at the next start.
    const commandContainers = () =>
      second.docker.listContainers({ all: true, filters: { label: ['io.hostctl.node-command=true'] } });
    expect(await commandContainers()).toEqual([]);
    const leftover = await second.docker.createContainer({
      Image: TEST_IMAGE,
      Cmd: ['true'],
      Labels: { 'io.hostctl.node-command': 'true' },
    });
    expect((await commandContainers()).map((container) => container.Id)).toContain(leftover.id);
    const command = createNodeCommand({
      socketPath: second.socketPath,
      image: TEST_IMAGE,
      timeoutMs: 10_000,
      leftoverAgeS: 0,
    });
    expect(await command(['iptables', '-w', '-S', 'HOSTCTL-PUBLISHED'])).toMatchObject({ code: 0 });
    expect(await commandContainers()).toEqual([]);
  });

  it('a drained node empties: its task moves to the other node; activate takes new tasks again', async () => {
    const second = nodeNamed(await observe(), 2);
    await setAvailability(second.id, 'drain');
    const drained = await until('the drained node to empty', async () => {
      const nodes = await observe();
      const [a, b] = [nodeNamed(nodes, 1), nodeNamed(nodes, 2)];
      return b.tasks.length === 0 && running(a).length === 2 ? nodes : undefined;
    });
    expect(nodeNamed(drained, 2)).toMatchObject({ availability: 'drain', requestedAvailability: null });

    await setAvailability(second.id, 'active');
    // Swarm does not move tasks back on its own; new tasks (a scale-up) go to the emptier node.
    const info = (await service.inspect()) as { Version: { Index: number }; Spec: Docker.ServiceSpec };
    await service.update({
      ...info.Spec,
      version: info.Version.Index,
      Mode: { Replicated: { Replicas: 4 } },
    });
    await until('two running tasks on each node', async () => {
      const nodes = await observe();
      return nodes.every((node) => running(node).length === 2) ? true : undefined;
    });
    expect(nodeNamed(await observe(), 2)).toMatchObject({ availability: 'active', availabilityError: null });
  });

  it('a killed node’s tasks are rescheduled and the service answers again (time printed)', async () => {
    const killedAt = Date.now();
    await swarm.kill(2);
    let downAfter = 0;
    const rescheduled = await until('the tasks of the killed node to run on the other one', async () => {
      const nodes = await observe();
      const [a, b] = [nodeNamed(nodes, 1), nodeNamed(nodes, 2)];
      if (b.state === 'down' && downAfter === 0) downAfter = Date.now() - killedAt;
      const tasks = await endpoints();
      return b.state === 'down' && running(a).length === 4 && tasks.length === 4 ? tasks : undefined;
    });
    const rescheduledAfter = Date.now() - killedAt;
    const moved = rescheduled[rescheduled.length - 1]!;
    expect(
      await until(
        'an answer through the proxy',
        async () => ((await answerThroughCaddy(moved)) ? true : undefined),
        30_000,
      ),
    ).toBe(true);
    const answeredAfter = Date.now() - killedAt;
    // The dead node's engine is still configured: its part of the disk usage is left out, the
    // rest of the swarm's is still read.
    const disk = await observation(true).telemetry.diskUsage();
    expect(
      disk.containers.filter((container) => container.labels[SERVICE_LABEL] === serviceId).length,
    ).toBeGreaterThanOrEqual(4);
    console.info(
      `node kill: marked down after ${(downAfter / 1000).toFixed(1)} s, tasks rescheduled after ${(rescheduledAfter / 1000).toFixed(1)} s, answering through Caddy after ${(answeredAfter / 1000).toFixed(1)} s`,
    );
  });
});
