import { parseBackupHooks } from './backup-hooks.parser.js';
import { parseReleaseCommand } from './release-command.parser.js';
import { LIMITS } from '@hostctl/domain';
import { DEFAULT_CONTAINER_LIMITS, type ContainerLimitPolicy } from './container-limits.js';
import { checkDependencies } from './dependency-graph.js';
import { interpolateTree, interpolationBudget } from './interpolate.js';
import type { Plan, PlanContainer } from './plan.js';
import { child, entries, isRecord, Problems } from './problems.js';
import { parseService } from './service.parser.js';
import { parseTopLevelVolumes } from './volumes.parser.js';
import { loadBoundedYaml, YAML_BOUNDS } from './yaml-bounds.js';

export interface ParseComposeOptions {
  /** Only git/ai deployments build images from the service's own repository. */
  allowBuild?: boolean;
  /** Defaults and ceilings of memory, CPU and processes; DEFAULT_CONTAINER_LIMITS when absent. */
  limits?: ContainerLimitPolicy;
  /**
   * The image policy of the caller (why an image may not run, or null), reported with every other
   * problem of the document so a tenant fixes them in one round trip. Runs on references that
   * passed the grammar only.
   */
  checkImage?: (image: string) => string | null;
}

/**
 * Order matters for security: bound the input, expand anchors/merge keys (bounded by what they
 * expand to, see yaml-bounds.ts), interpolate (bounded again), and only then validate, so nothing
 * reaches the plan without passing the allowlist in its final form.
 */
const MAX_SERVICES = 20;
const TOP_LEVEL_IGNORED = new Set(['version', 'name']);
const SERVICE_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function parseCompose(
  text: string,
  variables: Record<string, string>,
  options: ParseComposeOptions = {},
): Plan {
  const problems = new Problems();
  if (Buffer.byteLength(text, 'utf8') > LIMITS.composeMaxBytes) {
    problems.add('(root)', `the compose document exceeds ${LIMITS.composeMaxBytes / 1024} KiB`);
    problems.throwIfAny();
  }
  const document = loadBoundedYaml(text, problems);
  problems.throwIfAny();
  const expanded = interpolateTree(document, variables, problems, interpolationBudget(YAML_BOUNDS.maxBytes));
  problems.throwIfAny();
  checkPlainData(expanded, '', problems);
  problems.throwIfAny();
  const plan = toPlan(expanded, variables, options, problems);
  problems.throwIfAny();
  return plan;
}

/** Tags like !!binary produce non-JSON values; a plan only ever holds plain data. */
function checkPlainData(value: unknown, at: string, problems: Problems): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) problems.add(at, 'numbers must be finite');
    return;
  }
  if (Array.isArray(value))
    return value.forEach((item, index) => checkPlainData(item, child(at, index), problems));
  if (isRecord(value))
    return entries(value).forEach(([key, item]) => checkPlainData(item, child(at, key), problems));
  problems.add(at, 'unsupported YAML value (custom tags are not allowed)');
}

function toPlan(
  document: unknown,
  variables: Record<string, string>,
  options: ParseComposeOptions,
  problems: Problems,
): Plan {
  if (!isRecord(document)) {
    problems.add('(root)', 'the document must be a mapping with a services key');
    return { containers: [], volumes: [] };
  }
  for (const [key] of entries(document)) {
    if (key === 'services' || key === 'volumes' || TOP_LEVEL_IGNORED.has(key) || key.startsWith('x-'))
      continue;
    const reason = key === 'networks' ? ': each service runs on its own private network' : '';
    problems.add(key, `${key} is not allowed${reason}`);
  }
  const volumes = parseTopLevelVolumes(document.volumes, problems);
  const services = document.services;
  if (!isRecord(services) || Object.keys(services).length === 0) {
    problems.add('services', 'at least one service is required');
    return { containers: [], volumes };
  }
  if (Object.keys(services).length > MAX_SERVICES)
    problems.add('services', `at most ${MAX_SERVICES} services are allowed`);
  const ctx = {
    variables,
    volumes: new Set(volumes),
    allowBuild: options.allowBuild === true,
    limits: options.limits ?? DEFAULT_CONTAINER_LIMITS,
    problems,
    ...(options.checkImage ? { checkImage: options.checkImage } : {}),
  };
  const containers: PlanContainer[] = [];
  for (const [name, raw] of entries(services)) {
    if (!SERVICE_NAME.test(name)) {
      problems.add(
        child('services', name),
        'service names must be DNS labels (lowercase letters, digits, inner hyphens)',
      );
    }
    const container = parseService(name, raw, ctx);
    if (container) containers.push(container);
  }
  checkDependencies(containers, problems);
  checkContainerCount(containers, ctx.limits.maxContainersPerService, problems);
  const plan: Plan = { containers, volumes };
  const web = pickWeb(containers);
  if (web) plan.web = web;
  const release = parseReleaseCommand(services, problems);
  if (release) plan.release = release;
  parseBackupHooks(services, containers, problems);
  return plan;
}

/** Every replica is a container on some node: the cap counts them, not compose services. */
export function containerCount(containers: readonly PlanContainer[]): number {
  return containers.reduce((sum, container) => sum + (container.replicas ?? 1), 0);
}

/**
 * What a plan claims of its customer's quotas (docs/quotas.md): containers, and their memory and
 * CPU limits summed with replicas, rounded up to whole MiB and thousandths of a CPU.
 */
export function planCapacity(containers: readonly PlanContainer[]): {
  containers: number;
  memoryMb: number;
  millicpus: number;
} {
  let memoryBytes = 0;
  let nanoCpus = 0;
  for (const container of containers) {
    const replicas = container.replicas ?? 1;
    memoryBytes += (container.limits.memoryBytes ?? 0) * replicas;
    nanoCpus += (container.limits.nanoCpus ?? 0) * replicas;
  }
  return {
    containers: containerCount(containers),
    memoryMb: Math.ceil(memoryBytes / (1024 * 1024)),
    millicpus: Math.ceil(nanoCpus / 1e6),
  };
}

function checkContainerCount(containers: PlanContainer[], max: number, problems: Problems): void {
  const count = containerCount(containers);
  if (count <= max) return;
  problems.add(
    'services',
    `the service would run ${count} containers (deploy.replicas summed over its services); at most ${max} per service on this platform (SERVICE_MAX_CONTAINERS)`,
  );
}

/** The public endpoint: a listening container named `web` if any, else the first that listens. */
export function pickWeb(containers: PlanContainer[]): Plan['web'] {
  const listening = containers.filter((container) => container.ports.length > 0);
  const chosen = listening.find((container) => container.name === 'web') ?? listening[0];
  return chosen ? { container: chosen.name, port: chosen.ports[0]! } : undefined;
}
