import { randomUUID } from 'node:crypto';
import type { createBackupContainers } from '../adapters/backup-containers.js';

type BackupContainers = ReturnType<typeof createBackupContainers>;

/**
 * Volumes for the backup engine's end-to-end tests: made under `prefix`, filled and read by a
 * busybox script in `image` with only the volume mounted at /data (no network), removed by
 * `removeAll` in the file's afterAll.
 */
export function volumeFixtures(containers: BackupContainers, image: string, prefix: string) {
  const made: string[] = [];

  async function onVolume(volume: string, script: string): Promise<string> {
    const result = await containers.run({
      name: `${prefix}-${randomUUID().slice(0, 8)}`,
      image,
      cmd: ['sh', '-c', script],
      env: [],
      mounts: [{ type: 'volume', source: volume, target: '/data', readOnly: false }],
      labels: {},
    });
    if (result.exitCode !== 0) throw new Error(`volume script failed: ${result.stderr}`);
    return result.stdout;
  }

  return {
    onVolume,
    newVolume: async (): Promise<string> => {
      const name = `${prefix}-${randomUUID().slice(0, 12)}`;
      await containers.ensureVolume(name, {});
      made.push(name);
      return name;
    },
    /** Mode, size, owner and SHA-256 of every path under /data: equal after an exact restore. */
    checksums: (volume: string) =>
      onVolume(
        volume,
        'cd /data && find . | sort | while read -r f; do stat -c "%a %s %u %n" "$f"; [ -f "$f" ] && sha256sum "$f"; done; true',
      ),
    removeAll: async (): Promise<void> => {
      for (const volume of made) await containers.removeVolume(volume).catch(() => undefined);
    },
  };
}
