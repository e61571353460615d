import Docker from 'dockerode';
import { dockerNamePrefix } from '@hostctl/domain';
import { TEST_IMAGE } from './env.js';

/**
 * Reads and writes a service's named volume the way an operator would look at it: a throwaway
 * busybox container with only that volume mounted. The scripts are fixed; data goes in by env.
 */
const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });

export const volumeOf = (serviceId: string, volume: string) => `${dockerNamePrefix(serviceId)}-${volume}`;

async function runOn(volume: string, script: string, env: string[] = []): Promise<string> {
  const container = await docker.createContainer({
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', script],
    Env: env,
    NetworkDisabled: true,
    HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: '/data' }] },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const raw = await container.logs({ stdout: true, stderr: true });
    const output = demux(raw);
    if (StatusCode !== 0) throw new Error(`volume helper exited ${StatusCode}: ${output}`);
    return output;
  } finally {
    await container.remove({ force: true });
  }
}

function demux(raw: Buffer): string {
  const parts: Buffer[] = [];
  for (let at = 0; at + 8 <= raw.length;) {
    const size = raw.readUInt32BE(at + 4);
    parts.push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Writes `content` to `/data/<file>` of the volume (the file name is fixed by the test). */
export const writeVolumeFile = (volume: string, file: string, content: string) =>
  runOn(volume, 'printf %s "$CONTENT" > "/data/$FILE"', [`CONTENT=${content}`, `FILE=${file}`]);

/** Every file of the volume with its SHA-256, mode and size, sorted: equal lists, equal volumes. */
export const volumeChecksums = (volume: string) =>
  runOn(
    volume,
    'cd /data && find . -type f | sort | while read -r f; do sha256sum "$f"; stat -c "%a %s %n" "$f"; done',
  );

/** The contents of `/data/<file>` of the volume, or `missing` when there is no such file. */
export const readVolumeFile = (volume: string, file: string) =>
  runOn(volume, 'if [ -f "/data/$FILE" ]; then cat "/data/$FILE"; else printf missing; fi', [`FILE=${file}`]);
