import { RESERVED_LABEL_PREFIX } from '@hostctl/domain';
import { child, entries, isRecord, type Problems } from './problems.js';
import { splitShellWords } from './shell-words.js';

/**
 * environment, labels, command/entrypoint and depends_on: each accepts compose's map and list
 * spellings and normalises to one shape.
 */
const ENV_NAME = /^[^=\0]+$/;
const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** Map or list form into ordered pairs; `KEY` without `=` in list form yields a null value. */
function pairs(value: unknown, at: string, problems: Problems): [string, Scalar, string][] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    return value.flatMap((item, index): [string, Scalar, string][] => {
      if (typeof item !== 'string') {
        problems.add(child(at, index), 'must be a KEY=value string');
        return [];
      }
      const eq = item.indexOf('=');
      return [
        eq < 0 ? [item, null, child(at, index)] : [item.slice(0, eq), item.slice(eq + 1), child(at, index)],
      ];
    });
  }
  if (isRecord(value)) {
    return entries(value).flatMap(([key, item]): [string, Scalar, string][] => {
      if (isScalar(item)) return [[key, item, child(at, key)]];
      problems.add(child(at, key), 'must be a string, number, boolean or null');
      return [];
    });
  }
  problems.add(at, 'must be a mapping or a list of KEY=value');
  return [];
}

/**
 * A variable without a value takes the caller's variable of that name (compose would read the
 * host environment, which here is the worker's and must never leak) and is left unset otherwise.
 */
export function parseEnvironment(
  value: unknown,
  at: string,
  variables: Record<string, string>,
  problems: Problems,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item, itemPath] of pairs(value, at, problems)) {
    if (!ENV_NAME.test(key) || key === '__proto__') {
      problems.add(itemPath, `invalid environment variable name ${JSON.stringify(key)}`);
    } else if (item !== null) {
      out[key] = String(item);
    } else if (Object.hasOwn(variables, key)) {
      out[key] = variables[key]!;
    }
  }
  return out;
}

export function parseLabels(value: unknown, at: string, problems: Problems): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item, itemPath] of pairs(value, at, problems)) {
    if (key.toLowerCase().startsWith(RESERVED_LABEL_PREFIX)) {
      problems.add(itemPath, `labels starting with ${RESERVED_LABEL_PREFIX} are reserved for the platform`);
    } else if (!LABEL_KEY.test(key) || key === '__proto__') {
      problems.add(itemPath, `invalid label key ${JSON.stringify(key)}`);
    } else {
      out[key] = item === null ? '' : String(item);
    }
  }
  return out;
}

/** String form is split like compose does; the result is always an argv array, never a shell string. */
export function parseArgv(value: unknown, at: string, problems: Problems): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const words = splitShellWords(value);
    if (!words) problems.add(at, 'unterminated quote or trailing backslash');
    return words;
  }
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' || typeof item === 'number')) {
    return value.map(String);
  }
  problems.add(at, 'must be a string or a list of strings');
  return undefined;
}

const CONDITIONS = new Set(['service_started', 'service_healthy']);
const DEPENDS_KEYS = new Set(['condition', 'restart', 'required']);

export function parseDependsOn(value: unknown, at: string, problems: Problems): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    return (value as unknown[]).filter((item, index): item is string => {
      if (typeof item === 'string') return true;
      problems.add(child(at, index), 'must be a service name');
      return false;
    });
  }
  if (!isRecord(value)) {
    problems.add(at, 'must be a list or a mapping of service names');
    return [];
  }
  for (const [name, options] of entries(value)) {
    if (options === null) continue;
    if (!isRecord(options)) {
      problems.add(child(at, name), 'must be a mapping');
      continue;
    }
    for (const [key, option] of entries(options)) {
      const optionPath = child(child(at, name), key);
      if (!DEPENDS_KEYS.has(key)) problems.add(optionPath, `${key} is not allowed`);
      else if (key === 'condition' && !CONDITIONS.has(String(option))) {
        problems.add(optionPath, 'condition must be service_started or service_healthy');
      } else if (key !== 'condition' && typeof option !== 'boolean')
        problems.add(optionPath, 'must be true or false');
    }
  }
  return Object.keys(value);
}
