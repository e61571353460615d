import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { INSTANCE_LABEL, OWNER_LABEL } from '@hostctl/domain';
import { BENCH } from './config.js';

export const docker = new Docker({ socketPath: BENCH.dockerSocket });

/**
 * The raw baseline: what the worker asks Docker for when it deploys the bench's compose service
 * (one `local/busybox:1` container running httpd on 8080, on its own bridge network, Init,
 * restart unless-stopped, no-new-privileges, the same number of labels), done directly with
 * dockerode and nothing else. Labelled with the bench's own label, so no hostctl reconciler ever
 * considers these containers its own.
 */
export interface RawTimings {
  networkMs: number;
  createMs: number;
  startMs: number;
  /** network + create + start */
  totalMs: number;
}

export async function rawCreateStart(): Promise<{
  timings: RawTimings;
  containerId: string;
  networkId: string;
}> {
  const name = `bench-raw-${randomUUID().slice(0, 12)}`;
  const labels = {
    [BENCH.rawLabel]: 'true',
    'bench.hostctl.service-id': name,
    'bench.hostctl.instance': BENCH.queuePrefix,
    'bench.hostctl.deployment-id': randomUUID(),
    'bench.hostctl.component': 'web',
  };
  const t0 = performance.now();
  const network = await docker.createNetwork({
    Name: name,
    Driver: 'bridge',
    Labels: labels,
    CheckDuplicate: true,
  });
  const t1 = performance.now();
  const container = await docker.createContainer({
    name: `${name}-web`,
    Image: BENCH.image,
    Env: [],
    Labels: labels,
    ExposedPorts: { '8080/tcp': {} },
    HostConfig: {
      Init: true,
      RestartPolicy: { Name: 'unless-stopped' },
      Mounts: [],
      NetworkMode: name,
      SecurityOpt: ['no-new-privileges:true'],
    },
    NetworkingConfig: { EndpointsConfig: { [name]: { Aliases: ['web'] } } },
  });
  const t2 = performance.now();
  await container.start();
  const t3 = performance.now();
  return {
    timings: { networkMs: t1 - t0, createMs: t2 - t1, startMs: t3 - t2, totalMs: t3 - t0 },
    containerId: container.id,
    networkId: network.id,
  };
}

export async function rawRemove(raw: { containerId: string; networkId: string }): Promise<void> {
  await retry(() => docker.getContainer(raw.containerId).remove({ force: true }));
  await retry(() => docker.getNetwork(raw.networkId).remove());
}

/**
 * Removal under load sometimes fails transiently in the engine ("error marking network … for
 * deletion"); a few retries, then the error (cleanupDocker at the end removes what is left).
 */
async function retry(operation: () => Promise<unknown>, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await operation();
      return;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return;
      if (attempt >= attempts) throw error;
      await sleep(300 * attempt);
    }
  }
}

/** Timed raw lifecycle operations on a raw container (same stop timeout as the worker: 10 s). */
export async function rawLifecycle(
  containerId: string,
  action: 'start' | 'stop' | 'restart',
): Promise<number> {
  const container = docker.getContainer(containerId);
  const t0 = performance.now();
  if (action === 'start') await container.start();
  else if (action === 'stop') await container.stop({ t: 10 });
  else await container.restart({ t: 10 });
  return performance.now() - t0;
}

/**
 * How many more bridge networks the engine can create (up to `max`): every hostctl service gets
 * its own network, and Docker's default address pools allow only ~31 in total.
 */
export async function probeNetworkCapacity(max: number): Promise<number> {
  const created: string[] = [];
  try {
    for (let i = 0; i < max; i++) {
      try {
        const network = await docker.createNetwork({
          Name: `bench-probe-${randomUUID().slice(0, 8)}`,
          Driver: 'bridge',
          Labels: { [BENCH.rawLabel]: 'probe' },
        });
        created.push(network.id);
      } catch {
        break;
      }
    }
    return created.length;
  } finally {
    for (const id of created) await docker.getNetwork(id).remove();
  }
}

/** Docker objects hostctl created for the bench installation (label io.hostctl.instance=<bench prefix>). */
export async function hostctlObjects(): Promise<{ containers: number; networks: number; volumes: number }> {
  const filters = JSON.stringify({
    label: [`${OWNER_LABEL}=true`, `${INSTANCE_LABEL}=${BENCH.queuePrefix}`],
  });
  const [containers, networks, volumes] = await Promise.all([
    docker.listContainers({ all: true, filters }),
    docker.listNetworks({ filters }),
    docker.listVolumes({ filters }),
  ]);
  return { containers: containers.length, networks: networks.length, volumes: volumes.Volumes?.length ?? 0 };
}

/**
 * Removes every container, network and volume of the bench (hostctl's for the bench prefix and
 * the raw baseline's). Returns how many there were: 0 at the end of a clean run.
 */
export async function cleanupDocker(): Promise<number> {
  const filterSets = [
    JSON.stringify({ label: [`${OWNER_LABEL}=true`, `${INSTANCE_LABEL}=${BENCH.queuePrefix}`] }),
    JSON.stringify({ label: [BENCH.rawLabel] }),
  ];
  let count = 0;
  for (const filters of filterSets) {
    for (const c of await docker.listContainers({ all: true, filters })) {
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
      count++;
    }
    for (const n of await docker.listNetworks({ filters })) {
      await docker
        .getNetwork(n.Id)
        .remove()
        .catch(() => undefined);
      count++;
    }
    for (const v of (await docker.listVolumes({ filters })).Volumes ?? []) {
      await docker
        .getVolume(v.Name)
        .remove()
        .catch(() => undefined);
      count++;
    }
  }
  return count;
}

/**
 * The raw baseline of a one-off run: what `docker run --rm` of the command does, done with
 * dockerode: create a container of the bench image on an existing network, start it, wait for its
 * exit, read its output, remove it. Timed as a whole.
 */
export async function rawRun(
  networkId: string,
  command: string[],
): Promise<{ ms: number; exitCode: number }> {
  const t0 = performance.now();
  const container = await docker.createContainer({
    name: `bench-raw-run-${randomUUID().slice(0, 12)}`,
    Image: BENCH.image,
    Cmd: command,
    Labels: { [BENCH.rawLabel]: 'true' },
    HostConfig: { Init: true, NetworkMode: networkId, SecurityOpt: ['no-new-privileges:true'] },
  });
  await container.start();
  const { StatusCode } = (await container.wait()) as { StatusCode: number };
  await container.logs({ stdout: true, stderr: true });
  await retry(() => container.remove({ force: true }));
  return { ms: performance.now() - t0, exitCode: StatusCode };
}
