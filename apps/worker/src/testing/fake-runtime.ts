import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { DomainError } from '@hostctl/domain';
import type {
  ContainerRuntime,
  ContainerSpec,
  ContainerState,
  ImageInfo,
  Labels,
  NamedObject,
} from '../adapters/runtime.js';

/**
 * An in-memory ContainerRuntime for the worker's logic tests: no engine, yet it keeps the promises
 * the Docker runtime keeps (runtime-contract.ts runs the same suite against both). A started
 * container with exposed ports really accepts TCP connections, on an address of its own in
 * 127.0.0.0/8 (all loopback on Linux), so readiness and health probes run unchanged. `exit()`
 * plays a crash; a container whose environment sets FAKE_EXIT_CODE exits with it right after
 * every start (a process that cannot start), so a compose document can ask for one. With
 * FAKE_EXIT_AFTER_MS it exits (code 1) that long after each start (a release that crashes once it
 * has passed its first checks); with FAKE_UNHEALTHY its health check fails. Images are found by
 * reference, by id and by `repo@digest`, as the engine finds them.
 */
export interface FakeRuntime extends ContainerRuntime {
  /** Makes an image present locally, as a build or `docker import` would. */
  addImage(reference: string, labels?: Labels): void;
  /** Puts an image in the (fake) registry, so pullImage finds it. */
  publish(reference: string, digest: string): void;
  /** The container's process ends with this exit code (and output), as a crash would. */
  exit(idOrName: string, exitCode: number, output?: string): Promise<void>;
  /** The image reference a container was created from. */
  imageOf(idOrName: string): string | undefined;
  /** Every object it holds, for leak assertions. */
  objects(): { containers: string[]; networks: string[]; volumes: string[]; images: string[] };
}

interface FakeContainer {
  id: string;
  spec: ContainerSpec;
  running: boolean;
  exitCode: number;
  ip?: string;
  output: string[];
  listeners: net.Server[];
  timer?: NodeJS.Timeout;
  startedAt?: number;
}

const newId = () => randomBytes(32).toString('hex');
const hasLabels = (labels: Labels, wanted: Labels) =>
  Object.entries(wanted).every(([key, value]) => labels[key] === value);

// One /16 of loopback per fake, so parallel fakes (and their listeners) never collide: each vitest
// worker process (VITEST_POOL_ID 1, 2, …) takes its own 16 blocks and cycles through them, where a
// random start had two processes pick the same block now and then (EADDRINUSE).
const BLOCKS_PER_PROCESS = 16;
const firstBlock = 64 + ((Number(process.env.VITEST_POOL_ID ?? 0) * BLOCKS_PER_PROCESS) % 176);
let fakesCreated = 0;

export function createFakeRuntime(options: { images?: string[] } = {}): FakeRuntime {
  const images = new Map<string, ImageInfo & { labels: Labels }>();
  const registry = new Map<string, string>();
  // Every repo@digest ever published: a registry keeps old manifests when a tag moves on.
  const manifests = new Set<string>();
  const repository = (ref: string) => ref.replace(/@.*$/, '').replace(/:[^:/]*$/, '');
  const networks = new Map<string, NamedObject>();
  const volumes = new Map<string, NamedObject>();
  const containers = new Map<string, FakeContainer>();
  const block = firstBlock + (fakesCreated++ % BLOCKS_PER_PROCESS);
  let nextHost = 2;

  // A tag that moves to a new image leaves the old one behind, untagged, as the engine does.
  const tag = (reference: string, image: ImageInfo & { labels: Labels }) => {
    const previous = images.get(reference);
    if (previous && previous.id !== image.id) images.set(previous.id, previous);
    images.set(reference, image);
  };
  const addImage = (reference: string, labels: Labels = {}) => {
    const id = `sha256:${newId()}`;
    tag(reference, { id, digest: id, labels });
  };
  for (const image of options.images ?? []) addImage(image);

  const findImage = (reference: string) =>
    images.get(reference) ??
    [...images.values()].find((image) => image.id === reference || image.digest === reference);

  const find = (idOrName: string) =>
    containers.get(idOrName) ?? [...containers.values()].find((c) => c.spec.name === idOrName);

  // A stopped process's connections end with it: a client still holding one (an HTTP client that
  // never read the body) must not keep the listener, and so the stop, waiting.
  const sockets = new WeakMap<net.Server, Set<net.Socket>>();
  const closeListeners = async (container: FakeContainer) => {
    await Promise.all(
      container.listeners.map((server) => {
        const closed = new Promise((resolve) => server.close(resolve));
        for (const socket of sockets.get(server) ?? []) socket.destroy();
        return closed;
      }),
    );
    container.listeners = [];
  };

  const listen = (ip: string, port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const open = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        open.add(socket);
        socket.on('close', () => open.delete(socket));
        // Probes connect and hang up at once: a reset is their business, not an error here.
        socket.on('error', () => undefined);
        socket.end('HTTP/1.0 200 OK\r\n\r\nfake\n');
      });
      sockets.set(server, open);
      server.once('error', reject);
      server.listen(port, ip, () => resolve(server));
    });

  const stop = async (container: FakeContainer, exitCode: number) => {
    clearTimeout(container.timer);
    await closeListeners(container);
    container.running = false;
    container.exitCode = exitCode;
    delete container.ip;
  };

  const start = async (container: FakeContainer) => {
    if (container.running) return;
    const crash = container.spec.env.find((entry) => entry.startsWith('FAKE_EXIT_CODE='));
    if (crash) {
      container.output.push('fake: the process exited at start');
      container.exitCode = Number(crash.slice('FAKE_EXIT_CODE='.length));
      return;
    }
    const host = nextHost++;
    const ip = `127.${block}.${Math.floor(host / 250)}.${(host % 250) + 2}`;
    container.listeners = await Promise.all(container.spec.exposedPorts.map((port) => listen(ip, port)));
    container.ip = ip;
    container.running = true;
    container.startedAt = Date.now();
    container.exitCode = 0;
    const later = container.spec.env.find((entry) => entry.startsWith('FAKE_EXIT_AFTER_MS='));
    if (later) {
      const after = Number(later.slice('FAKE_EXIT_AFTER_MS='.length));
      container.timer = setTimeout(() => {
        container.output.push('fake: the process crashed after starting');
        void stop(container, 1);
      }, after);
    }
  };

  const removeNamed = (store: Map<string, NamedObject>, idOrName: string) => {
    for (const [key, object] of store)
      if (object.id === idOrName || object.name === idOrName) store.delete(key);
  };

  return {
    addImage,
    publish: (reference, digest) => {
      registry.set(reference, digest);
      manifests.add(`${repository(reference)}@${digest}`);
    },
    async exit(idOrName, exitCode, output) {
      const container = find(idOrName);
      if (!container) throw new Error(`no fake container ${idOrName}`);
      if (output) container.output.push(output);
      await stop(container, exitCode);
    },
    imageOf: (idOrName) => find(idOrName)?.spec.image,
    objects: () => ({
      containers: [...containers.values()].map((c) => c.spec.name),
      networks: [...networks.keys()],
      volumes: [...volumes.keys()],
      images: [...images.keys()],
    }),

    async ping() {},
    async inspectImage(reference) {
      const image = findImage(reference);
      return image ? { id: image.id, digest: image.digest } : null;
    },
    async pullImage(reference, onProgress) {
      // By tag, or by digest (repo@sha256:…) as a rollback pins it.
      const digest =
        registry.get(reference) ??
        (manifests.has(reference) ? reference.slice(reference.indexOf('@') + 1) : undefined);
      if (!digest)
        throw new DomainError('image_unavailable', `image ${reference} was not found in its registry`);
      onProgress(`${reference}: Pull complete`);
      const pinned = `${repository(reference)}@${digest}`;
      const known = findImage(pinned);
      tag(reference, { id: known?.id ?? `sha256:${newId()}`, digest: pinned, labels: {} });
    },
    async pushImage(source, target) {
      const image = findImage(source);
      if (!image) throw new DomainError('image_unavailable', `image ${source} is not on this engine`);
      // A registry's digest is of the manifest: stable for the same image, whatever the tag.
      const digest = `sha256:${image.id
        .replace(/^sha256:/, '')
        .slice(0, 64)
        .padEnd(64, '0')}`;
      const tagged = `${target.repository}:${target.tag}`;
      registry.set(tagged, digest);
      manifests.add(`${target.repository}@${digest}`);
      tag(tagged, { ...image, digest: `${target.repository}@${digest}` });
      return `${target.repository}@${digest}`;
    },
    async ensureNetwork(name, labels) {
      if (!networks.has(name)) networks.set(name, { id: newId(), name, labels });
    },
    async ensureVolume(name, labels) {
      if (!volumes.has(name)) volumes.set(name, { id: name, name, labels });
    },
    async listContainers(labels) {
      return [...containers.values()]
        .filter((c) => hasLabels(c.spec.labels, labels))
        .map((c) => ({
          id: c.id,
          name: c.spec.name,
          labels: c.spec.labels,
          state: c.running ? 'running' : 'exited',
        }));
    },
    async createContainer(spec) {
      if (find(spec.name))
        throw new DomainError('runtime_error', `container name ${spec.name} is already in use`);
      // As the engine answers a create from an image it does not have (404): not retryable.
      if (!findImage(spec.image))
        throw new DomainError('image_unavailable', `image ${spec.image} is not available`);
      if (!networks.has(spec.network))
        throw new DomainError('runtime_error', `network ${spec.network} not found`);
      for (const mount of spec.mounts) await this.ensureVolume(mount.volume, {});
      const id = newId();
      containers.set(id, { id, spec, running: false, exitCode: 0, output: [], listeners: [] });
      return id;
    },
    async inspectContainer(idOrName): Promise<ContainerState | null> {
      const c = find(idOrName);
      if (!c) return null;
      return {
        id: c.id,
        name: c.spec.name,
        labels: c.spec.labels,
        status: c.running ? 'running' : 'exited',
        isRunning: c.running,
        isRestarting: false,
        exitCode: c.exitCode,
        restartCount: 0,
        ...(c.spec.healthcheck && c.running ? fakeHealth(c, c.spec.healthcheck) : {}),
        ...(c.ip ? { ip: c.ip } : {}),
      };
    },
    async startContainer(id) {
      const container = find(id);
      if (!container) throw new DomainError('runtime_error', `no such container: ${id}`);
      await start(container);
    },
    async stopContainer(id) {
      const container = find(id);
      if (!container) throw new DomainError('runtime_error', `no such container: ${id}`);
      if (container.running) await stop(container, 143);
    },
    async restartContainer(id) {
      const container = find(id);
      if (!container) throw new DomainError('runtime_error', `no such container: ${id}`);
      await stop(container, 143);
      await start(container);
    },
    async removeContainer(id) {
      const container = find(id);
      if (!container) return;
      clearTimeout(container.timer);
      await closeListeners(container);
      containers.delete(container.id);
    },
    async containerLogs(id, tail) {
      return (find(id)?.output ?? []).slice(-tail).join('\n');
    },
    async listNetworks(labels) {
      return [...networks.values()].filter((n) => hasLabels(n.labels, labels));
    },
    async removeNetwork(id) {
      const inUse = [...containers.values()].some((c) => networks.get(c.spec.network)?.id === id);
      if (inUse) throw new DomainError('runtime_error', `network ${id} has active endpoints`);
      removeNamed(networks, id);
    },
    async listVolumes(labels) {
      return [...volumes.values()].filter((v) => hasLabels(v.labels, labels));
    },
    async removeVolume(name) {
      removeNamed(volumes, name);
    },
    async listImages(labels) {
      return [...images.entries()]
        .filter(([, image]) => Object.keys(labels).length > 0 && hasLabels(image.labels, labels))
        .map(([name, image]) => ({ id: image.id, name, labels: image.labels }));
    },
    async removeImage(id) {
      for (const [reference, image] of images)
        if (image.id === id || reference === id) images.delete(reference);
    },
  };
}

/**
 * A fake container's checks: one passes right at start (so it is healthy at once) and one more at
 * every interval since, as the engine would run them; with FAKE_UNHEALTHY every check fails.
 */
function fakeHealth(
  container: FakeContainer,
  check: NonNullable<ContainerSpec['healthcheck']>,
): Pick<ContainerState, 'health' | 'healthyStreak'> {
  if (container.spec.env.includes('FAKE_UNHEALTHY=1')) return { health: 'unhealthy', healthyStreak: 0 };
  const ran = Math.floor((Date.now() - (container.startedAt ?? Date.now())) / Math.max(1, check.intervalMs));
  return { health: 'healthy', healthyStreak: Math.min(5, ran + 1) };
}
