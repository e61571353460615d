// Issue 27, class 1: "a task reaches other swarm nodes". On two real Swarm nodes in network
// namespaces, with the egress policy installed on both through their engines as the worker does
// (createNodesEgress, the builder of every machine's firewall): the rules as they were (each node
// refuses its own addresses only) let a task on the manager, where the proxy runs, dial node 2's
// published task port (its source, masqueraded to the manager's address, is a proxy source), and
// a task on node 2 dial a listener on the manager (a registry, a control port). With the swarm
// members' addresses read from the manager's nodes API, both are refused, the proxy still
// reaches the tasks, and a node that leaves the swarm leaves the lists at the next sweep.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { swarmMemberAddresses } from '../adapters/swarm-members.js';
import { createNodesEgress } from '../egress/node-egress.js';
import { probeFrom } from '../testing/egress-probe.js';
import { silentLogger } from '../testing/fixtures.js';
import { startNetnsSwarm, type NetnsSwarm, type SwarmNode } from '../testing/netns-swarm.js';
import { TEST_IMAGE } from '../testing/test-env.js';

const run = promisify(execFile);
const LISTENER_PORT = '5000';
const LISTENER_BODY = 'listener-on-the-manager';
let swarm: NetnsSwarm;
let service: Docker.Service;
let listenerDir = '';
/** Node id → the node, read while both are alive. */
const nodeById = new Map<string, SwarmNode>();

beforeAll(async () => {
  swarm = await startNetnsSwarm({ nodes: 2, images: [TEST_IMAGE] });
  for (const node of swarm.nodes) {
    const info = (await node.docker.info()) as { Swarm: { NodeID: string } };
    nodeById.set(info.Swarm.NodeID, node);
  }
  const id = randomUUID().slice(0, 8);
  const network = await swarm.manager.createNetwork({ Name: `hostctl-swm-${id}`, Driver: 'overlay' });
  service = await swarm.manager.createService({
    Name: `hostctl-swm-${id}`,
    TaskTemplate: {
      ContainerSpec: {
        Image: TEST_IMAGE,
        // Each task answers with its container's hostname: an answer names the task it came from.
        Command: ['sh', '-c', 'mkdir -p /w && hostname > /w/index.html && exec httpd -f -p 8080 -h /w'],
      },
      Networks: [{ Target: network.id }],
      // One task per node.
      Placement: { MaxReplicas: 1 },
    },
    Mode: { Replicated: { Replicas: 2 } },
    EndpointSpec: { Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishMode: 'host' }] },
  });
  // A listener of the manager's machine on its swarm address (the platform registry, say): busybox
  // httpd in node 1's namespace; the swarm's close() ends every process of the namespace.
  listenerDir = await mkdtemp(path.join(tmpdir(), 'hostctl-swm-'));
  await writeFile(path.join(listenerDir, 'index.html'), `${LISTENER_BODY}\n`);
  const manager = swarm.nodes[0]!;
  spawn(
    'nsenter',
    [`--net=/run/netns/${manager.netns}`, '/bin/busybox', 'httpd', '-f', '-p', `${manager.swarmAddress}:${LISTENER_PORT}`, '-h', listenerDir],
    { stdio: 'ignore', detached: true },
  ).unref(); // prettier-ignore
}, 180_000);

afterAll(async () => {
  await swarm?.close();
  if (listenerDir) await rm(listenerDir, { recursive: true, force: true });
}, 120_000);

interface Task {
  node: SwarmNode;
  container: string;
  port: string;
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

/** The running task on each node, with its container and the port it publishes there. */
async function tasksByNode(): Promise<[Task, Task]> {
  return until('a running task on each node', async () => {
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
    const found = tasks
      .filter((task) => task.Status.State === 'running' && task.Status.PortStatus?.Ports?.[0]?.PublishedPort)
      .map((task) => ({
        node: nodeById.get(task.NodeID)!,
        container: (task.Status.ContainerStatus?.ContainerID ?? '').slice(0, 12),
        port: String(task.Status.PortStatus!.Ports![0]!.PublishedPort),
      }));
    const [first, second] = [1, 2].map((index) => found.find((task) => task.node.index === index));
    return first && second ? ([first, second] as [Task, Task]) : undefined;
  });
}

/** An HTTP GET from `task`'s container; reached when the answer holds `body`. */
const reaches = async (task: Task, address: string, port: string, body: string) =>
  (await probeFrom(task.node.docker, task.container, `${address} ${port}`, body)).reached;

/** The egress policy on both nodes, through their engines, as the worker installs it. */
function bothNodesEgress(memberAddresses?: () => Promise<string[]>) {
  const warnings: string[] = [];
  const egress = createNodesEgress({
    sockets: new Map(swarm.nodes.map((node) => [node.hostname, node.socketPath])),
    image: TEST_IMAGE,
    denyCidrs: '',
    // As in production: the proxy runs on the manager's machine, so the manager's address as the
    // nodes see it is a proxy source; the host's ends of the links carry this test's own probes.
    proxySources: [swarm.nodes[0]!.swarmAddress, ...swarm.nodes.map((node) => node.hostLinkAddress)],
    ...(memberAddresses ? { memberAddresses } : {}),
    logger: {
      ...silentLogger,
      warn: (...args: unknown[]) => void warnings.push(JSON.stringify(args)),
    } as never,
    recheckMs: 0,
  });
  return { egress, warnings };
}

const rulesOf = async (node: SwarmNode) =>
  (await run('nsenter', [`--net=/run/netns/${node.netns}`, 'iptables', '-w', '-S', 'HOSTCTL-EGRESS'])).stdout;

describe('a task and the other members of its swarm', () => {
  it('with each node refusing only its own addresses, a task reaches the other node (the rules as they were)', async () => {
    const [onManager, onNode2] = await tasksByNode();
    const { egress, warnings } = bothNodesEgress();
    await egress.ensure();
    expect(warnings).toEqual([]);
    // Its own node is refused already.
    expect(await reaches(onNode2, onNode2.node.swarmAddress, onNode2.port, onNode2.container)).toBe(false);
    // Node 2's task port, around the proxy, from the proxy's own node.
    expect(await reaches(onManager, onNode2.node.swarmAddress, onNode2.port, onNode2.container)).toBe(true);
    // A listener of the manager's machine, from node 2.
    const manager = swarm.nodes[0]!;
    expect(await reaches(onNode2, manager.swarmAddress, LISTENER_PORT, LISTENER_BODY)).toBe(true);
  });

  it('with the members’ addresses and the swarm ports denied on every node, neither is reached; the proxy still is', async () => {
    const [onManager, onNode2] = await tasksByNode();
    const manager = swarm.nodes[0]!;
    const members = await swarmMemberAddresses(manager.socketPath);
    expect(members).toEqual(swarm.nodes.map((node) => node.swarmAddress).sort());

    const { egress, warnings } = bothNodesEgress(() => swarmMemberAddresses(manager.socketPath));
    await egress.ensure();
    expect(warnings).toEqual([]);
    expect(await reaches(onManager, onNode2.node.swarmAddress, onNode2.port, onNode2.container)).toBe(false);
    expect(await reaches(onNode2, manager.swarmAddress, LISTENER_PORT, LISTENER_BODY)).toBe(false);
    expect(await reaches(onNode2, manager.swarmAddress, onManager.port, onManager.container)).toBe(false);

    // Every node carries every member and the swarm's ports, whatever the address.
    for (const node of swarm.nodes) {
      const rules = await rulesOf(node);
      for (const address of members) expect(rules).toContain(`-d ${address}/32 -j REJECT`);
      expect(rules).toContain('-p udp -m udp --dport 4789 -j REJECT');
      expect(rules).toContain('-p tcp -m tcp --dport 2377 -j REJECT');
      expect(rules).toContain('-p tcp -m tcp --dport 7946 -j REJECT');
      expect(rules).toContain('-p udp -m udp --dport 7946 -j REJECT');
    }
    // Tasks stay reachable by the proxy (the host, from its end of each link) and answer it.
    for (const task of [onManager, onNode2]) {
      const { stdout } = await run('curl', [
        '-s',
        '-m',
        '3',
        `http://${task.node.hostAddress}:${task.port}/`,
      ]);
      expect(stdout).toContain(task.container);
    }
  });

  it('a node that leaves the swarm leaves the lists at the next sweep, within the recheck interval', async () => {
    const [manager, second] = swarm.nodes as [SwarmNode, SwarmNode];
    // The recheck interval alone would leave the rules alone for a minute: the new list does not.
    const egress = createNodesEgress({
      sockets: new Map([[manager.hostname, manager.socketPath]]),
      image: TEST_IMAGE,
      denyCidrs: '',
      memberAddresses: () => swarmMemberAddresses(manager.socketPath),
      logger: silentLogger,
    });
    await egress.ensure();
    expect(await rulesOf(manager)).toContain(`-d ${second.swarmAddress}/32 -j REJECT`);

    await second.docker.swarmLeave({ force: true });
    const secondId = [...nodeById].find(([, node]) => node === second)![0];
    await until('node 2 to be down', async () => {
      const info = (await swarm.manager.getNode(secondId).inspect()) as { Status: { State: string } };
      return info.Status.State === 'down' ? true : undefined;
    });
    await swarm.manager.getNode(secondId).remove({ force: true });
    await egress.ensure();
    const rules = await rulesOf(manager);
    expect(rules).not.toContain(`-d ${second.swarmAddress}/32`);
    expect(rules).toContain(`-d ${manager.swarmAddress}/32 -j REJECT`);
  });
});
