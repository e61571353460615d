import type { ContainerLimitPolicy } from './container-limits.js';
import type { PlanContainer, PlanHealthcheck, PlanRestartPolicy } from './plan.js';
import { child, entries, isRecord, type Problems } from './problems.js';
import { parseBytes, parseDuration } from './units.js';

/**
 * healthcheck, restart and deploy.resources.limits. Docker's defaults are written into the plan
 * so that what renderCompose shows is exactly what runs.
 */
const HEALTH_KEYS = new Set(['test', 'interval', 'timeout', 'retries', 'start_period', 'disable']);
export const HEALTH_DEFAULTS = {
  intervalMs: 30_000,
  timeoutMs: 30_000,
  retries: 3,
  startPeriodMs: 0,
} as const;

export function parseHealthcheck(
  value: unknown,
  at: string,
  problems: Problems,
): PlanHealthcheck | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  for (const [key] of entries(value))
    if (!HEALTH_KEYS.has(key)) problems.add(child(at, key), `${key} is not allowed`);
  if (value.disable === true) return { test: ['NONE'], ...HEALTH_DEFAULTS };
  if (value.disable !== undefined && value.disable !== false)
    problems.add(child(at, 'disable'), 'must be true or false');
  const test = healthTest(value.test, child(at, 'test'), problems);
  const check: PlanHealthcheck = {
    test: test ?? [],
    intervalMs: duration(value.interval, child(at, 'interval'), HEALTH_DEFAULTS.intervalMs, 1, problems),
    timeoutMs: duration(value.timeout, child(at, 'timeout'), HEALTH_DEFAULTS.timeoutMs, 1, problems),
    startPeriodMs: duration(
      value.start_period,
      child(at, 'start_period'),
      HEALTH_DEFAULTS.startPeriodMs,
      0,
      problems,
    ),
    retries: HEALTH_DEFAULTS.retries,
  };
  if (value.retries !== undefined) {
    if (
      typeof value.retries === 'number' &&
      Number.isInteger(value.retries) &&
      value.retries >= 0 &&
      value.retries <= 100
    ) {
      check.retries = value.retries;
    } else problems.add(child(at, 'retries'), 'must be an integer between 0 and 100');
  }
  return test ? check : undefined;
}

function healthTest(value: unknown, at: string, problems: Problems): string[] | undefined {
  if (typeof value === 'string' && value.trim() !== '') return ['CMD-SHELL', value];
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item): item is string => typeof item === 'string')
  ) {
    const [kind] = value;
    if (kind === 'NONE') return ['NONE'];
    if ((kind === 'CMD' || kind === 'CMD-SHELL') && value.length > 1) return value;
  }
  problems.add(at, 'must be a command string or a list starting with CMD, CMD-SHELL or NONE');
  return undefined;
}

function duration(value: unknown, at: string, fallback: number, minimum: number, problems: Problems): number {
  if (value === undefined || value === null) return fallback;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms < minimum || ms > 24 * 3_600_000) {
    problems.add(at, `must be a duration like 10s or 1m30s${minimum > 0 ? ' (at least 1ms)' : ''}`);
    return fallback;
  }
  return ms;
}

const RESTART = /^(no|always|unless-stopped|on-failure)(?::(\d{1,4}))?$/;

/** Hosted services default to unless-stopped: they must come back after an engine restart. */
export function parseRestart(
  value: unknown,
  at: string,
  problems: Problems,
): Pick<PlanContainer, 'restart' | 'restartMaxRetries'> {
  if (value === undefined || value === null) return { restart: 'unless-stopped' };
  const match = typeof value === 'string' ? RESTART.exec(value) : null;
  if (!match || (match[2] !== undefined && match[1] !== 'on-failure')) {
    problems.add(at, 'must be no, always, unless-stopped, on-failure or on-failure:N');
    return { restart: 'unless-stopped' };
  }
  const restart = match[1] as PlanRestartPolicy;
  return match[2] === undefined ? { restart } : { restart, restartMaxRetries: Number(match[2]) };
}

const MIN_MEMORY = 6 * 1024 * 1024; // Docker refuses less
const MIB = 1024 * 1024;

/**
 * deploy.resources.limits (memory, cpus, pids): each within the operator's ceiling, and each one
 * left out gets the operator's default, so every container of a plan has all three.
 */
export function parseDeploy(
  value: unknown,
  at: string,
  policy: ContainerLimitPolicy,
  problems: Problems,
): PlanContainer['limits'] {
  const limits = {
    memoryBytes: policy.defaultMemoryBytes,
    nanoCpus: policy.defaultNanoCpus,
    pids: policy.defaultPids,
  };
  if (value === undefined || value === null) return limits;
  // replicas, placement and reservations: swarm-deploy.parser.ts.
  const resources = only(value, at, ['resources', 'update_config', 'replicas', 'placement'], problems);
  const limitsValue =
    resources === undefined
      ? undefined
      : only(resources, child(at, 'resources'), ['limits', 'reservations'], problems);
  if (limitsValue === undefined) return limits;
  const limitsPath = child(child(at, 'resources'), 'limits');
  if (!isRecord(limitsValue)) {
    problems.add(limitsPath, 'must be a mapping');
    return limits;
  }
  for (const [key, item] of entries(limitsValue)) {
    const itemPath = child(limitsPath, key);
    if (key === 'memory') {
      const bytes = parseBytes(item);
      if (bytes === undefined || bytes < MIN_MEMORY)
        problems.add(itemPath, 'must be a size like 256M or 1g (at least 6M)');
      else if (bytes > policy.maxMemoryBytes)
        problems.add(itemPath, `at most ${policy.maxMemoryBytes / MIB}M per container on this platform`);
      else limits.memoryBytes = bytes;
    } else if (key === 'cpus') {
      const cpus =
        typeof item === 'number'
          ? item
          : typeof item === 'string' && /^\d+(\.\d+)?$/.test(item)
            ? Number(item)
            : NaN;
      const nanoCpus = Math.round(cpus * 1e9);
      if (!(cpus > 0) || nanoCpus < 1e7) problems.add(itemPath, 'must be a number of CPUs like 0.5 or 2');
      else if (nanoCpus > policy.maxNanoCpus)
        problems.add(itemPath, `at most ${policy.maxNanoCpus / 1e9} CPUs per container on this platform`);
      else limits.nanoCpus = nanoCpus;
    } else if (key === 'pids') {
      if (typeof item !== 'number' || !Number.isInteger(item) || item < 1)
        problems.add(itemPath, 'must be a positive whole number of processes');
      else if (item > policy.maxPids)
        problems.add(itemPath, `at most ${policy.maxPids} processes per container on this platform`);
      else limits.pids = item;
    } else problems.add(itemPath, `${key} is not allowed (only cpus, memory and pids)`);
  }
  return limits;
}

/** The first allowed key's value; every key not allowed is reported. */
function only(value: unknown, at: string, keys: readonly string[], problems: Problems): unknown {
  if (!isRecord(value)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  for (const [other] of entries(value))
    if (!keys.includes(other)) problems.add(child(at, other), `${other} is not allowed`);
  return value[keys[0] ?? ''] ?? undefined;
}

const UPDATE_ORDERS = ['start-first', 'stop-first'] as const;

/**
 * deploy.update_config.order: how a redeploy replaces the container (docs/worker.md). Only `order`
 * is honoured; the rest of update_config (parallelism, delay, failure_action, …) is Swarm's and is
 * refused rather than silently ignored. Absent: undefined (the worker decides).
 */
export function parseUpdateOrder(
  deploy: unknown,
  at: string,
  problems: Problems,
): PlanContainer['updateOrder'] {
  if (!isRecord(deploy) || deploy.update_config === undefined || deploy.update_config === null)
    return undefined;
  const path = child(at, 'update_config');
  const order = only(deploy.update_config, path, ['order'], problems);
  if (order === undefined) return undefined;
  if (typeof order === 'string' && (UPDATE_ORDERS as readonly string[]).includes(order))
    return order as (typeof UPDATE_ORDERS)[number];
  problems.add(child(path, 'order'), 'must be start-first or stop-first');
  return undefined;
}
