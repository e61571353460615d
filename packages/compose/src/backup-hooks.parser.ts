import type { PlanBackupHooks, PlanContainer } from './plan.js';
import { child, entries, isRecord, type Problems } from './problems.js';
import { EXTENSION, argvOf } from './release-command.parser.js';

/** Bounds of a hook's run time, in seconds (docs/backups.md#hooks). */
export const BACKUP_HOOK_TIMEOUT = { default: 300, min: 1, max: 3600 } as const;
const HOOK_KEYS = new Set(['pre', 'post', 'verify', 'timeout_seconds']);

/**
 * `services.<name>.x-hostctl.backup`: `pre` and `post`, each an argv run in the component's
 * running container around a backup (a database dump into a file of its volume, then its removal),
 * `verify`, an argv run in a short-lived container of its image on a restored copy of its volumes
 * (a restore test, docs/backups.md#verification), and `timeout_seconds` for each. Checked here so the API refuses a bad declaration naming its
 * field, before anything is deployed; the hooks land on the component's plan container.
 * A non-mapping `x-hostctl` is reported by the release command's parser.
 */
export function parseBackupHooks(services: unknown, containers: PlanContainer[], problems: Problems): void {
  if (!isRecord(services)) return;
  for (const [name, service] of entries(services)) {
    const extension = isRecord(service) ? service[EXTENSION] : undefined;
    if (!isRecord(extension)) continue;
    const raw = extension.backup;
    if (raw === undefined) continue;
    const at = child(child(child('services', name), EXTENSION), 'backup');
    const hooks = hooksOf(raw, at, problems);
    const container = containers.find((item) => item.name === name);
    if (hooks && container) container.backupHooks = hooks;
  }
}

function hooksOf(raw: unknown, at: string, problems: Problems): PlanBackupHooks | undefined {
  if (!isRecord(raw)) {
    problems.add(at, 'must be a mapping with pre, post, verify and timeout_seconds');
    return undefined;
  }
  let isValid = true;
  for (const [key] of entries(raw))
    if (!HOOK_KEYS.has(key)) {
      problems.add(child(at, key), `${key} is not a backup setting (pre, post, verify, timeout_seconds)`);
      isValid = false;
    }
  const hooks: PlanBackupHooks = { timeoutSeconds: BACKUP_HOOK_TIMEOUT.default };
  for (const key of ['pre', 'post', 'verify'] as const) {
    if (raw[key] === undefined) continue;
    const argv = argvOf(raw[key], child(at, key), problems);
    if (argv) hooks[key] = argv;
    else isValid = false;
  }
  const timeout = raw.timeout_seconds;
  if (timeout !== undefined) {
    const { min, max } = BACKUP_HOOK_TIMEOUT;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < min || timeout > max) {
      problems.add(child(at, 'timeout_seconds'), `must be a whole number of seconds from ${min} to ${max}`);
      isValid = false;
    } else hooks.timeoutSeconds = timeout;
  }
  if (isValid && !hooks.pre && !hooks.post && !hooks.verify) {
    problems.add(at, 'must declare a pre, a post or a verify command');
    isValid = false;
  }
  return isValid ? hooks : undefined;
}
