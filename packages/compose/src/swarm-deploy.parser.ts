import type { PlanContainer } from './plan.js';
import { child, entries, isRecord, type Problems } from './problems.js';
import { parseBytes } from './units.js';

/**
 * deploy.replicas, deploy.placement and deploy.resources.reservations: what a Swarm schedules
 * with. The Swarm runtime honours them; the single engine runs one container per component and
 * says so on the deployment (never silently). Limits are parsed with the rest of deploy
 * (healthcheck.parser.ts); a reservation above its limit is refused here, since Swarm would
 * accept a task no node could ever place.
 */
export const MAX_REPLICAS = 10;
const MAX_PLACEMENT_RULES = 10;
// node.* and engine.labels.* attributes compared with == or != to a plain value (Swarm's syntax).
const CONSTRAINT =
  /^(node\.(id|hostname|role|platform\.os|platform\.arch|labels\.[A-Za-z0-9_.-]+)|engine\.labels\.[A-Za-z0-9_.-]+)\s*(==|!=)\s*[A-Za-z0-9_.:-]+$/;
const SPREAD =
  /^(node\.(id|hostname|role|platform\.os|platform\.arch|labels\.[A-Za-z0-9_.-]+)|engine\.labels\.[A-Za-z0-9_.-]+)$/;

type SwarmFields = Pick<PlanContainer, 'replicas' | 'placement' | 'reservations'>;

export function parseSwarmDeploy(
  deploy: unknown,
  at: string,
  limits: PlanContainer['limits'],
  problems: Problems,
): SwarmFields {
  if (!isRecord(deploy)) return {};
  const fields: SwarmFields = {};
  const replicas = parseReplicas(deploy.replicas, child(at, 'replicas'), problems);
  if (replicas !== undefined) fields.replicas = replicas;
  const placement = parsePlacement(deploy.placement, child(at, 'placement'), problems);
  if (placement) fields.placement = placement;
  const resources = isRecord(deploy.resources) ? deploy.resources : undefined;
  const reservations = parseReservations(
    resources?.reservations,
    child(child(at, 'resources'), 'reservations'),
    limits,
    problems,
  );
  if (reservations) fields.reservations = reservations;
  return fields;
}

function parseReplicas(value: unknown, at: string, problems: Problems): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_REPLICAS) {
    problems.add(at, `must be a whole number from 1 to ${MAX_REPLICAS}`);
    return undefined;
  }
  return value;
}

function parsePlacement(value: unknown, at: string, problems: Problems): SwarmFields['placement'] {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  const placement = { constraints: [] as string[], preferences: [] as string[] };
  for (const [key, item] of entries(value)) {
    const path = child(at, key);
    if (key === 'constraints')
      placement.constraints = rules(item, path, problems, (rule) =>
        CONSTRAINT.test(rule) ? undefined : 'must be like node.labels.zone == eu-1 (== or !=)',
      );
    else if (key === 'preferences') placement.preferences = preferences(item, path, problems);
    else problems.add(path, `${key} is not allowed (only constraints and preferences)`);
  }
  return placement.constraints.length + placement.preferences.length > 0 ? placement : undefined;
}

function rules(
  value: unknown,
  at: string,
  problems: Problems,
  check: (rule: string) => string | undefined,
): string[] {
  if (!Array.isArray(value) || value.length > MAX_PLACEMENT_RULES) {
    problems.add(at, `must be a list of at most ${MAX_PLACEMENT_RULES} strings`);
    return [];
  }
  const accepted: string[] = [];
  value.forEach((rule: unknown, index) => {
    const problem = typeof rule === 'string' ? check(rule.trim()) : 'must be a string';
    if (problem) problems.add(child(at, index), problem);
    else accepted.push((rule as string).trim());
  });
  return accepted;
}

/** `- spread: node.labels.zone` entries: the only preference Swarm has. */
function preferences(value: unknown, at: string, problems: Problems): string[] {
  if (!Array.isArray(value) || value.length > MAX_PLACEMENT_RULES) {
    problems.add(
      at,
      `must be a list of at most ${MAX_PLACEMENT_RULES} entries like {spread: node.labels.zone}`,
    );
    return [];
  }
  const accepted: string[] = [];
  value.forEach((item: unknown, index) => {
    const spread = isRecord(item) && Object.keys(item).length === 1 ? item.spread : undefined;
    if (typeof spread === 'string' && SPREAD.test(spread.trim())) accepted.push(spread.trim());
    else
      problems.add(child(at, index), 'must be {spread: <node attribute>}, e.g. {spread: node.labels.zone}');
  });
  return accepted;
}

function parseReservations(
  value: unknown,
  at: string,
  limits: PlanContainer['limits'],
  problems: Problems,
): SwarmFields['reservations'] {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  const reservations: NonNullable<SwarmFields['reservations']> = {};
  for (const [key, item] of entries(value)) {
    const path = child(at, key);
    if (key === 'memory') {
      const bytes = parseBytes(item);
      if (bytes === undefined || bytes <= 0) problems.add(path, 'must be a size like 128M');
      else if (limits.memoryBytes !== undefined && bytes > limits.memoryBytes)
        problems.add(path, 'must not exceed the memory limit (deploy.resources.limits.memory)');
      else reservations.memoryBytes = bytes;
    } else if (key === 'cpus') {
      const cpus = typeof item === 'number' ? item : typeof item === 'string' ? Number(item) : NaN;
      const nanoCpus = Math.round(cpus * 1e9);
      if (!(cpus > 0)) problems.add(path, 'must be a number of CPUs like 0.25');
      else if (limits.nanoCpus !== undefined && nanoCpus > limits.nanoCpus)
        problems.add(path, 'must not exceed the CPU limit (deploy.resources.limits.cpus)');
      else reservations.nanoCpus = nanoCpus;
    } else problems.add(path, `${key} is not allowed (only cpus and memory)`);
  }
  return Object.keys(reservations).length > 0 ? reservations : undefined;
}
