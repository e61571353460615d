import path from 'node:path';
import type { ContainerLimitPolicy } from './container-limits.js';
import { parseImageReference } from '@hostctl/source-policy';
import { parseDeploy, parseHealthcheck, parseRestart, parseUpdateOrder } from './healthcheck.parser.js';
import { parseArgv, parseDependsOn, parseEnvironment, parseLabels } from './key-values.parser.js';
import type { PlanContainer } from './plan.js';
import { parseExpose, parsePorts } from './ports.parser.js';
import { child, entries, isRecord, type Problems } from './problems.js';
import { parseMounts } from './volumes.parser.js';
import { parseSwarmDeploy } from './swarm-deploy.parser.js';

/**
 * One compose service into one plan container. An allowlist, not a denylist: a key compose adds
 * tomorrow is refused until someone decides it is safe.
 */
export interface ServiceContext {
  variables: Record<string, string>;
  volumes: ReadonlySet<string>;
  allowBuild: boolean;
  limits: ContainerLimitPolicy;
  problems: Problems;
  checkImage?: (image: string) => string | null;
}

const ALLOWED = new Set([
  'image',
  'build',
  'command',
  'entrypoint',
  'environment',
  'expose',
  'ports',
  'volumes',
  'depends_on',
  'healthcheck',
  'restart',
  'labels',
  'deploy',
  'working_dir',
  'user',
  'hostname',
  'init',
]);

/** Why the most tempting refused keys are refused; everything else gets the generic message. */
const REASONS: Record<string, string> = {
  container_name: 'container names are assigned by the platform',
  networks: 'each service runs on its own private network',
  network_mode: 'each service runs on its own private network',
  privileged: 'containers never run privileged',
  env_file: 'files on the host cannot be read; use environment',
  extends: 'write the service out in full (YAML anchors and merge keys work)',
  volumes_from: 'mount named volumes instead',
  tmpfs: 'only named volumes can be mounted',
};

const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

export function parseService(name: string, raw: unknown, ctx: ServiceContext): PlanContainer | undefined {
  const at = child('services', name);
  const { problems } = ctx;
  if (!isRecord(raw)) {
    problems.add(at, 'must be a mapping');
    return undefined;
  }
  for (const [key] of entries(raw)) {
    if (ALLOWED.has(key) || key.startsWith('x-')) continue;
    const reason = REASONS[key];
    problems.add(child(at, key), `${key} is not allowed${reason ? `: ${reason}` : ''}`);
  }
  const field = (key: string) => child(at, key);
  const build = parseBuild(raw.build, field('build'), ctx);
  // Docker's reference grammar (which registry, which policy applies is decided by the caller:
  // the API and worker run checkImage over the plan).
  const reference = raw.image === undefined ? undefined : parseImageReference(raw.image);
  const image = reference?.ok ? reference.image.text : undefined;
  if (reference && !reference.ok)
    problems.add(
      field('image'),
      `must be an image reference like registry.example.com/app:1: it ${reference.reason}`,
    );
  const refusal = image !== undefined ? ctx.checkImage?.(image) : null;
  if (refusal) problems.add(field('image'), `image ${image} ${refusal}`);
  if (raw.image === undefined && raw.build === undefined) problems.add(field('image'), 'image is required');
  const ports = [
    ...parsePorts(raw.ports, field('ports'), problems),
    ...parseExpose(raw.expose, field('expose'), problems),
  ];
  const container: PlanContainer = {
    name,
    image: image ?? '',
    environment: parseEnvironment(raw.environment, field('environment'), ctx.variables, problems),
    labels: parseLabels(raw.labels, field('labels'), problems),
    volumes: parseMounts(raw.volumes, field('volumes'), ctx.volumes, problems),
    ports: [...new Set(ports)],
    dependsOn: parseDependsOn(raw.depends_on, field('depends_on'), problems),
    ...parseRestart(raw.restart, field('restart'), problems),
    init: true,
    limits: parseDeploy(raw.deploy, field('deploy'), ctx.limits, problems),
  };
  if (build) container.build = build;
  Object.assign(
    container,
    parseSwarmDeploy(
      raw.deploy,
      field('deploy'),
      container.limits,
      { allowed: ctx.limits.placementAllowed },
      problems,
    ),
  );
  const updateOrder = parseUpdateOrder(raw.deploy, field('deploy'), problems);
  if (updateOrder) container.updateOrder = updateOrder;
  const command = parseArgv(raw.command, field('command'), problems);
  if (command) container.command = command;
  const entrypoint = parseArgv(raw.entrypoint, field('entrypoint'), problems);
  if (entrypoint) container.entrypoint = entrypoint;
  const healthcheck = parseHealthcheck(raw.healthcheck, field('healthcheck'), problems);
  if (healthcheck) container.healthcheck = healthcheck;
  if (raw.init !== undefined) {
    if (typeof raw.init === 'boolean') container.init = raw.init;
    else problems.add(field('init'), 'must be true or false');
  }
  const workingDir = optionalString(raw.working_dir, field('working_dir'), problems);
  if (workingDir !== undefined) {
    if (workingDir.startsWith('/')) container.workingDir = workingDir;
    else problems.add(field('working_dir'), 'must be an absolute path');
  }
  const user =
    typeof raw.user === 'number' ? String(raw.user) : optionalString(raw.user, field('user'), problems);
  if (user !== undefined) container.user = user;
  const hostname = optionalString(raw.hostname, field('hostname'), problems);
  if (hostname !== undefined) {
    if (HOSTNAME.test(hostname)) container.hostname = hostname;
    else problems.add(field('hostname'), 'must be a DNS label');
  }
  return container;
}

function optionalString(value: unknown, at: string, problems: Problems): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value !== '' && !value.includes('\0')) return value;
  problems.add(at, 'must be a non-empty string');
  return undefined;
}

/** Builds only read the service's own checked-out repository: no URLs, no absolute paths, no `..`. */
function parseBuild(value: unknown, at: string, ctx: ServiceContext): PlanContainer['build'] {
  if (value === undefined || value === null) return undefined;
  const { problems } = ctx;
  if (!ctx.allowBuild) {
    problems.add(at, 'build is not allowed for this deploy method: use a prebuilt image');
    return undefined;
  }
  const spec = typeof value === 'string' ? { context: value } : value;
  if (!isRecord(spec)) {
    problems.add(at, 'must be a path or a mapping with context and dockerfile');
    return undefined;
  }
  for (const [key] of entries(spec)) {
    if (key !== 'context' && key !== 'dockerfile') problems.add(child(at, key), `${key} is not allowed`);
  }
  const context = repoPath(
    spec.context ?? '.',
    typeof value === 'string' ? at : child(at, 'context'),
    problems,
  );
  const dockerfile = repoPath(spec.dockerfile ?? 'Dockerfile', child(at, 'dockerfile'), problems);
  return context !== undefined && dockerfile !== undefined ? { context, dockerfile } : undefined;
}

function repoPath(value: unknown, at: string, problems: Problems): string | undefined {
  const isInside =
    typeof value === 'string' &&
    value !== '' &&
    !value.startsWith('/') &&
    !value.includes('\\') &&
    !value.includes(':') &&
    !value.startsWith('~') &&
    !value.split('/').includes('..');
  if (!isInside) {
    problems.add(at, 'must be a relative path inside the repository (no URLs, absolute paths or ..)');
    return undefined;
  }
  return path.posix.normalize(value);
}
