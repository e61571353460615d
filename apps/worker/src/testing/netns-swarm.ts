import { execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import Docker from 'dockerode';

const run = promisify(execFile);

/**
 * A real multi-node Docker Swarm on one machine, for the two-node proof (docs/multi-host.md). The
 * facts it rests on are STACK-NOTES "Docker Swarm":
 * - each node is a dockerd of its own in a network namespace (`hostctl-swn-<id>-n<i>`), started
 *   through `nsenter --net=…` (`ip netns exec` breaks dockerd: "Devices cgroup isn't mounted"),
 *   with its own data-root, exec-root, pid file, socket, an empty daemon.json (the dev engine's
 *   /etc/docker/daemon.json has live-restore, which swarm mode refuses) and a UTS namespace so
 *   nodes have their own hostnames. Its iptables rules and docker0 live inside its namespace, so
 *   the dev engine's are never touched.
 * - the nodes talk over one veth pair between their namespaces (ports 2377/7946/4789 on that
 *   link): bridged or routed through the host, their traffic would cross the host's FORWARD chain,
 *   which the dev engine sets to DROP.
 * - each node has a second veth to the host, so the host (Caddy, the test) reaches the ports its
 *   tasks publish in `host` mode; there is no IPVS for the routing mesh (endpoint_mode dnsrr).
 * - images are copied from the dev engine (`docker save` → `load`): the platform registry listens
 *   on the host's loopback, which a namespace cannot reach.
 * Containers get `--cgroup-parent` of their node, so killing a node can kill its containers too
 * (a dead dockerd leaves them running) and close() leaves no process, mount or interface behind.
 */
export interface SwarmNode {
  index: number;
  hostname: string;
  netns: string;
  /** The node's address on the inter-node link (its swarm advertise address). */
  swarmAddress: string;
  /** The node's address as the host reaches it (published task ports answer here). */
  hostAddress: string;
  /** The host's end of that link: the source of the host's connections (Caddy's) as the node sees them. */
  hostLinkAddress: string;
  /** The node's engine socket on the host. */
  socketPath: string;
  docker: Docker;
}

export interface NetnsSwarm {
  nodes: SwarmNode[];
  /** The manager's engine (node 1). */
  manager: Docker;
  /** Node `index` dies at once: its links go down, then its engine and containers are killed. */
  kill(index: number): Promise<void>;
  close(): Promise<void>;
}

const ip = (...args: string[]) => run('ip', args);

export async function startNetnsSwarm(options: { nodes: number; images: string[] }): Promise<NetnsSwarm> {
  const id = randomInt(0x1000, 0xffff).toString(16);
  const octet = randomInt(1, 250);
  const base = `/tmp/hostctl-swn-${id}`;
  const nodes: (SwarmNode & { cgroup: string })[] = [];
  const swarm: NetnsSwarm = {
    nodes,
    get manager() {
      return nodes[0]!.docker;
    },
    kill: (index) => killNode(nodes[index - 1]!),
    close: async () => {
      for (const node of nodes) await killNode(node).catch(() => undefined);
      await unmountUnder(base);
      await rm(base, { recursive: true, force: true });
      for (const node of nodes) await ip('netns', 'del', node.netns).catch(() => undefined);
      // The host ends go too: a namespace an engine's lazy unmount still pins keeps its veth peer.
      for (const node of nodes) await ip('link', 'del', `hs${id}h${node.index}`).catch(() => undefined);
      for (const node of nodes) await removeCgroups(node.cgroup);
    },
  };
  try {
    await mkdir(base, { recursive: true });
    for (let index = 1; index <= options.nodes; index += 1) {
      const name = `hostctl-swn-${id}-n${index}`;
      await ip('netns', 'add', name);
      // Host link: a /30 per node (host .1, node .2).
      const host = `hs${id}h${index}`;
      await ip('link', 'add', host, 'type', 'veth', 'peer', 'name', `hs${id}i${index}`);
      await ip('link', 'set', `hs${id}i${index}`, 'netns', name);
      const hostAddress = `10.214.${octet}.${index * 4 + 2}`;
      const socketPath = `${base}/n${index}.sock`;
      const hostLinkAddress = `10.214.${octet}.${index * 4 + 1}`;
      await ip('addr', 'add', `${hostLinkAddress}/30`, 'dev', host);
      await ip('link', 'set', host, 'up');
      await ip('-n', name, 'addr', 'add', `${hostAddress}/30`, 'dev', `hs${id}i${index}`);
      await ip('-n', name, 'link', 'set', `hs${id}i${index}`, 'up');
      await ip('-n', name, 'link', 'set', 'lo', 'up');
      nodes.push({
        index,
        hostname: name,
        netns: name,
        swarmAddress: `10.213.${octet}.${index}`,
        hostAddress,
        hostLinkAddress,
        socketPath,
        docker: new Docker({ socketPath }),
        cgroup: name,
      });
    }
    await linkNodes(id, nodes);
    await Promise.all(nodes.map((node) => startEngine(base, node)));
    await formSwarm(nodes);
    await copyImages(options.images, nodes);
    return swarm;
  } catch (error) {
    await swarm.close();
    throw error;
  }
}

/** Two nodes: one veth pair between their namespaces, a /24 for the swarm's own traffic. */
async function linkNodes(id: string, nodes: SwarmNode[]): Promise<void> {
  if (nodes.length !== 2) throw new Error('the namespace swarm links exactly two nodes');
  await ip('link', 'add', `hs${id}l1`, 'type', 'veth', 'peer', 'name', `hs${id}l2`);
  for (const node of nodes) {
    const link = `hs${id}l${node.index}`;
    await ip('link', 'set', link, 'netns', node.netns);
    await ip('-n', node.netns, 'addr', 'add', `${node.swarmAddress}/24`, 'dev', link);
    await ip('-n', node.netns, 'link', 'set', link, 'up');
  }
}

async function startEngine(base: string, node: SwarmNode & { cgroup: string }): Promise<void> {
  const config = `${base}/daemon${node.index}.json`;
  await writeFile(config, '{}\n');
  const log = await open(`${base}/dockerd${node.index}.log`, 'a');
  const args = [
    '--config-file', config,
    '--data-root', `${base}/d${node.index}`,
    // Short: containerd's socket path under the exec-root must fit a unix socket name.
    '--exec-root', `${base}/e${node.index}`,
    '--pidfile', `${base}/n${node.index}.pid`,
    '-H', `unix://${node.socketPath}`,
    '--cgroup-parent', `/${node.cgroup}`,
    '--live-restore=false',
  ]; // prettier-ignore
  // The hostname and the arguments reach the shell as positional parameters, never as code.
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${node.netns}`,
      '--',
      'unshare',
      '--uts',
      '--',
      'sh',
      '-c',
      'hostname "$1" && shift && exec dockerd "$@"',
      'sh',
      node.hostname,
      ...args,
    ],
    { stdio: ['ignore', log.fd, log.fd], detached: true },
  );
  child.unref();
  await log.close();
  for (let waited = 0; waited < 60_000; waited += 250) {
    if (await node.docker.ping().then(() => true, () => false)) return; // prettier-ignore
    if (child.exitCode !== null) break;
    await sleep(250);
  }
  const tail = await readFile(`${base}/dockerd${node.index}.log`, 'utf8').catch(() => '');
  throw new Error(`dockerd of ${node.netns} did not start:\n${tail.slice(-2000)}`);
}

async function formSwarm(nodes: SwarmNode[]): Promise<void> {
  const [manager, ...workers] = nodes;
  await manager!.docker.swarmInit({
    AdvertiseAddr: manager!.swarmAddress,
    ListenAddr: `${manager!.swarmAddress}:2377`,
    DefaultAddrPool: ['10.226.0.0/16'],
    SubnetSize: 24,
    Spec: { Orchestration: { TaskHistoryRetentionLimit: 2 } },
  });
  const { JoinTokens } = (await manager!.docker.swarmInspect()) as { JoinTokens: { Worker: string } };
  for (const worker of workers) {
    await worker.docker.swarmJoin({
      AdvertiseAddr: worker.swarmAddress,
      ListenAddr: `${worker.swarmAddress}:2377`,
      RemoteAddrs: [`${manager!.swarmAddress}:2377`],
      JoinToken: JoinTokens.Worker,
    });
  }
}

async function copyImages(images: string[], nodes: SwarmNode[]): Promise<void> {
  const dev = new Docker({ socketPath: '/var/run/docker.sock' });
  for (const image of images) {
    for (const node of nodes) {
      const stream = await dev.getImage(image).get();
      const loaded = await node.docker.loadImage(stream, { quiet: true });
      await new Promise((resolve, reject) => {
        loaded.on('end', resolve).on('error', reject).resume();
      });
    }
  }
}

async function killNode(node: SwarmNode & { cgroup: string }): Promise<void> {
  for (const link of (await ip('-n', node.netns, '-o', 'link', 'show')).stdout.matchAll(/^\d+: ([^:@]+)/gm)) {
    if (link[1] !== 'lo') await ip('-n', node.netns, 'link', 'set', link[1]!, 'down').catch(() => undefined);
  }
  const engine = (await ip('netns', 'pids', node.netns).catch(() => ({ stdout: '' }))).stdout;
  const pids = [...engine.split(/\s+/), ...(await cgroupPids(node.cgroup))].filter(Boolean).map(Number);
  for (const pid of new Set(pids)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/** The cgroup directories of the node in every hierarchy (v1: one per controller; v2: one). */
async function cgroupDirs(cgroup: string): Promise<string[]> {
  const hierarchies = await readdir(CGROUP_ROOT).catch(() => [] as string[]);
  const candidates = [
    path.join(CGROUP_ROOT, cgroup),
    ...hierarchies.map((h) => path.join(CGROUP_ROOT, h, cgroup)),
  ];
  const found: string[] = [];
  for (const dir of candidates) {
    const walk = async (current: string): Promise<void> => {
      const entries = await readdir(current, { withFileTypes: true }).catch(() => null);
      if (!entries) return;
      for (const entry of entries) if (entry.isDirectory()) await walk(path.join(current, entry.name));
      found.push(current);
    };
    await walk(dir);
  }
  return found;
}

async function cgroupPids(cgroup: string): Promise<string[]> {
  const pids: string[] = [];
  for (const dir of await cgroupDirs(cgroup)) {
    pids.push(...(await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n'));
  }
  return pids;
}

/** Deepest first (cgroupDirs lists children before parents); a cgroup still busy is left alone. */
async function removeCgroups(cgroup: string): Promise<void> {
  for (let attempt = 0; attempt < 10 && (await cgroupPids(cgroup)).some(Boolean); attempt += 1)
    await sleep(200);
  for (const dir of await cgroupDirs(cgroup)) await rmdir(dir).catch(() => undefined);
}

/** Overlay, shm and network-namespace mounts the engines made under their directories. */
async function unmountUnder(base: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((mount) => mount === base || mount.startsWith(`${base}/`))
    .sort((a, b) => b.length - a.length);
  for (const mount of mounts) await run('umount', ['-l', mount]).catch(() => undefined);
}
