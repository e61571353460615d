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
const ATTRIBUTE =
  '(node\\.(?:id|hostname|role|platform\\.os|platform\\.arch|labels\\.[A-Za-z0-9_.-]+)|engine\\.labels\\.[A-Za-z0-9_.-]+)';
const CONSTRAINT = new RegExp(`^${ATTRIBUTE}\\s*(==|!=)\\s*([A-Za-z0-9_.:-]+)$`);
const SPREAD = new RegExp(`^${ATTRIBUTE}$`);

/**
 * Which nodes a tenant's tasks may be steered to is the operator's choice: an attribute is usable
 * only when SWARM_PLACEMENT_ALLOWED lists it exactly, and the manager is never a target whatever
 * is listed (it holds the swarm's keys and the control plane's engine socket). Without this a
 * compose pinned its tasks to the manager and probed node labels by whether its tasks ran.
 */
interface PlacementPolicy {
  allowed: readonly string[];
}

type SwarmFields = Pick<PlanContainer, 'replicas' | 'placement' | 'reservations'>;

export function parseSwarmDeploy(
  deploy: unknown,
  at: string,
  limits: PlanContainer['limits'],
  policy: PlacementPolicy,
  problems: Problems,
): SwarmFields {
  if (!isRecord(deploy)) return {};
  const fields: SwarmFields = {};
  const replicas = parseReplicas(deploy.replicas, child(at, 'replicas'), problems);
  if (replicas !== undefined) fields.replicas = replicas;
  const placement = parsePlacement(deploy.placement, child(at, 'placement'), policy, problems);
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

function parsePlacement(
  value: unknown,
  at: string,
  policy: PlacementPolicy,
  problems: Problems,
): SwarmFields['placement'] {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  const placement = { constraints: [] as string[], preferences: [] as string[] };
  for (const [key, item] of entries(value)) {
    const path = child(at, key);
    if (key === 'constraints')
      placement.constraints = rules(item, path, problems, (rule) => constraintProblem(rule, policy));
    else if (key === 'preferences') placement.preferences = preferences(item, path, policy, problems);
    else problems.add(path, `${key} is not allowed (only constraints and preferences)`);
  }
  return placement.constraints.length + placement.preferences.length > 0 ? placement : undefined;
}

function constraintProblem(rule: string, policy: PlacementPolicy): string | undefined {
  const match = CONSTRAINT.exec(rule);
  if (!match) return 'must be like node.labels.zone == eu-1 (== or !=)';
  const [, attribute = '', operator, value = ''] = match;
  const refusal = attributeProblem(rule, attribute, policy);
  if (refusal) return refusal;
  const pinsManager =
    attribute === 'node.role' &&
    ((operator === '==' && value === 'manager') || (operator === '!=' && value === 'worker'));
  return pinsManager ? `${rule}: tasks are never placed on the swarm manager by choice` : undefined;
}

function attributeProblem(rule: string, attribute: string, policy: PlacementPolicy): string | undefined {
  if (policy.allowed.includes(attribute)) return undefined;
  const open =
    policy.allowed.length > 0 ? `only ${policy.allowed.join(', ')} may be used` : 'none may be used';
  return `${rule}: ${attribute} is not a placement attribute this platform allows (${open}; SWARM_PLACEMENT_ALLOWED)`;
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
function preferences(value: unknown, at: string, policy: PlacementPolicy, problems: Problems): string[] {
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
    const attribute = typeof spread === 'string' ? spread.trim() : '';
    const refusal = SPREAD.test(attribute)
      ? attributeProblem(`spread: ${attribute}`, attribute, policy)
      : 'must be {spread: <node attribute>}, e.g. {spread: node.labels.zone}';
    if (refusal) problems.add(child(at, index), refusal);
    else accepted.push(attribute);
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
