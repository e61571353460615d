import path from 'node:path';
import type { PlanVolumeMount } from './plan.js';
import { child, entries, isRecord, type Problems } from './problems.js';

/**
 * Only named volumes that the document itself declares may be mounted. Host paths (absolute,
 * relative, `~`, Windows drives), binds, tmpfs, anonymous volumes and volume drivers are refused:
 * any of them would let a tenant reach the host (docker.sock, /, other tenants' data).
 */
export const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
const LONG_MOUNT_KEYS = new Set(['type', 'source', 'target', 'read_only']);

export function parseTopLevelVolumes(value: unknown, problems: Problems): string[] {
  if (value === undefined || value === null) return [];
  if (!isRecord(value)) {
    problems.add('volumes', 'must be a mapping of volume names');
    return [];
  }
  const names: string[] = [];
  for (const [name, definition] of entries(value)) {
    const at = child('volumes', name);
    if (!VOLUME_NAME.test(name)) problems.add(at, 'volume names use letters, digits, _ . - (at most 63)');
    else names.push(name);
    if (definition === null) continue;
    if (!isRecord(definition)) {
      problems.add(at, 'must be empty: write `name: {}`');
      continue;
    }
    for (const [key] of entries(definition)) {
      problems.add(
        child(at, key),
        `${key} is not allowed: volumes are local, platform-managed and take no options`,
      );
    }
  }
  return names;
}

export function parseMounts(
  value: unknown,
  at: string,
  declared: ReadonlySet<string>,
  problems: Problems,
): PlanVolumeMount[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.add(at, 'must be a list');
    return [];
  }
  const mounts: PlanVolumeMount[] = [];
  value.forEach((item, index) => {
    const itemPath = child(at, index);
    const mount =
      typeof item === 'string' ? shortMount(item, itemPath, problems) : longMount(item, itemPath, problems);
    if (!mount) return;
    if (!declared.has(mount.volume)) {
      problems.add(itemPath, `volume ${mount.volume} is not declared under the top-level volumes key`);
      return;
    }
    if (mounts.some((other) => other.target === mount.target)) {
      problems.add(itemPath, `${mount.target} is mounted twice`);
      return;
    }
    mounts.push(mount);
  });
  return mounts;
}

function shortMount(text: string, at: string, problems: Problems): PlanVolumeMount | undefined {
  const parts = text.split(':');
  if (parts.length === 1) {
    problems.add(
      at,
      'anonymous volumes are not supported: declare a named volume and mount it as name:/path',
    );
    return undefined;
  }
  const [source, target, mode, ...rest] = parts;
  if (rest.length > 0 || !checkSource(source!, at, problems)) {
    if (rest.length > 0) problems.add(at, 'expected name:/path or name:/path:ro');
    return undefined;
  }
  const options = mode === undefined ? [] : mode.split(',');
  const unknown = options.filter((option) => option !== 'ro' && option !== 'rw');
  if (unknown.length > 0) {
    problems.add(at, `mount options ${unknown.join(',')} are not allowed (only ro, rw)`);
    return undefined;
  }
  const normalised = checkTarget(target!, at, problems);
  return normalised ? { volume: source!, target: normalised, readOnly: options.includes('ro') } : undefined;
}

function longMount(item: unknown, at: string, problems: Problems): PlanVolumeMount | undefined {
  if (!isRecord(item)) {
    problems.add(at, 'must be name:/path or a mapping with type: volume');
    return undefined;
  }
  if (item.type !== 'volume') {
    const type = typeof item.type === 'string' ? item.type : 'missing';
    problems.add(
      child(at, 'type'),
      `mount type ${type} is not allowed: only type: volume with a named volume`,
    );
    return undefined;
  }
  let isValid = true;
  for (const [key] of entries(item)) {
    if (!LONG_MOUNT_KEYS.has(key)) {
      problems.add(child(at, key), `${key} is not allowed`);
      isValid = false;
    }
  }
  if (typeof item.source !== 'string') {
    problems.add(child(at, 'source'), 'a named volume is required');
    return undefined;
  }
  if (item.read_only !== undefined && typeof item.read_only !== 'boolean') {
    problems.add(child(at, 'read_only'), 'must be true or false');
    isValid = false;
  }
  if (!checkSource(item.source, child(at, 'source'), problems)) return undefined;
  const target =
    typeof item.target === 'string' ? checkTarget(item.target, child(at, 'target'), problems) : undefined;
  if (typeof item.target !== 'string') problems.add(child(at, 'target'), 'a container path is required');
  if (!target || !isValid) return undefined;
  return { volume: item.source, target, readOnly: item.read_only === true };
}

function checkSource(source: string, at: string, problems: Problems): boolean {
  if (VOLUME_NAME.test(source)) return true;
  problems.add(at, `host paths cannot be mounted (${JSON.stringify(source)}): use a named volume`);
  return false;
}

function checkTarget(target: string, at: string, problems: Problems): string | undefined {
  if (!target.startsWith('/')) {
    problems.add(at, 'the container path must be absolute');
    return undefined;
  }
  const normalised = path.posix.normalize(target);
  if (normalised === '/') {
    problems.add(at, 'a volume cannot be mounted over the container root');
    return undefined;
  }
  return normalised.length > 1 && normalised.endsWith('/') ? normalised.slice(0, -1) : normalised;
}
