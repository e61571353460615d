import type { Plan } from './plan.js';
import { child, entries, isRecord, type Problems } from './problems.js';

/** Bounds of a release command: an argv, like a one-off run's (docs/jobs.md#release-command). */
const ARGS_MAX = 256;
const ARG_MAX_CHARS = 8 * 1024;
export const EXTENSION = 'x-hostctl';
const EXTENSION_KEYS = new Set(['release_command', 'backup']);

/**
 * `services.<name>.x-hostctl.release_command`: a command run once per deployment in a one-off
 * container of that service, after the images are ready and before the new release starts; a
 * non-zero exit fails the deployment (docs/jobs.md#release-command). An argv list only: a string
 * would need a shell to mean what it says, so a shell is written out (`[sh, -c, "…"]`). At most one
 * service declares it: one deployment, one gate.
 */
export function parseReleaseCommand(services: unknown, problems: Problems): Plan['release'] {
  if (!isRecord(services)) return undefined;
  let release: Plan['release'];
  for (const [name, service] of entries(services)) {
    if (!isRecord(service) || service[EXTENSION] === undefined) continue;
    const at = child(child('services', name), EXTENSION);
    const extension = service[EXTENSION];
    if (!isRecord(extension)) {
      problems.add(at, 'must be a mapping');
      continue;
    }
    for (const [key] of entries(extension))
      if (!EXTENSION_KEYS.has(key)) problems.add(child(at, key), `${key} is not a hostctl setting`);
    const raw = extension.release_command;
    if (raw === undefined) continue;
    const command = argvOf(raw, child(at, 'release_command'), problems);
    if (!command) continue;
    if (release) {
      problems.add(
        child(at, 'release_command'),
        `only one service may declare a release command; ${release.component} already does`,
      );
      continue;
    }
    release = { component: name, command };
  }
  return release;
}

/** An argv list (strings or numbers), bounded; reports what is wrong at `at` and returns undefined. */
export function argvOf(value: unknown, at: string, problems: Problems): string[] | undefined {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' && typeof item !== 'number')) {
    problems.add(at, 'must be a list of strings (an argv; for a shell write [sh, -c, "…"])');
    return undefined;
  }
  const argv = value.map(String);
  if (argv.length === 0 || argv[0]!.trim() === '') {
    problems.add(at, 'must name the program to run as its first element');
    return undefined;
  }
  if (argv.length > ARGS_MAX || argv.some((arg) => arg.length > ARG_MAX_CHARS)) {
    problems.add(at, `at most ${ARGS_MAX} arguments of at most ${ARG_MAX_CHARS} characters each`);
    return undefined;
  }
  return argv;
}
