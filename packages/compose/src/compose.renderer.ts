import { stringify } from 'yaml';
import { formatBytes, formatDuration } from './units.js';
import type { Plan, PlanContainer } from './plan.js';

/**
 * Re-emits exactly what will run as a normalised compose document (shown to users as the
 * service's `compose`). Values are already interpolated, so every `$` is escaped as `$$`:
 * parsing the output again, with no variables, yields the same plan.
 *
 * `environmentValue` lets a caller write an environment value its own way (a `${NAME}` reference
 * instead of the value it stood for); what it returns is written as it is, unescaped.
 */
export function renderCompose(
  plan: Plan,
  options: { environmentValue?: (name: string, value: string) => string } = {},
): string {
  const environmentValue = options.environmentValue ?? ((_name: string, value: string) => escape(value));
  const services: Record<string, unknown> = {};
  for (const container of plan.containers)
    services[container.name] = renderService(container, environmentValue);
  const release = plan.release ? services[plan.release.component] : undefined;
  if (plan.release && release)
    (release as Record<string, unknown>)['x-hostctl'] = { release_command: plan.release.command.map(escape) };
  for (const container of plan.containers) {
    const hooks = container.backupHooks;
    const service = services[container.name] as Record<string, unknown>;
    if (!hooks) continue;
    service['x-hostctl'] = {
      ...(service['x-hostctl'] as Record<string, unknown> | undefined),
      backup: {
        ...(hooks.pre ? { pre: hooks.pre.map(escape) } : {}),
        ...(hooks.post ? { post: hooks.post.map(escape) } : {}),
        ...(hooks.verify ? { verify: hooks.verify.map(escape) } : {}),
        timeout_seconds: hooks.timeoutSeconds,
      },
    };
  }
  const document: Record<string, unknown> = { services };
  if (plan.volumes.length > 0) document.volumes = Object.fromEntries(plan.volumes.map((name) => [name, {}]));
  return stringify(document, { lineWidth: 0 });
}

/** A literal value in a compose document: `$` written `$$`, so interpolation leaves it alone. */
export const escape = (value: string): string => value.replaceAll('$', '$$$$');
const escapeMap = (map: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(map).map(([key, value]) => [key, escape(value)]));

function renderService(
  container: PlanContainer,
  environmentValue: (name: string, value: string) => string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (container.image) out.image = escape(container.image);
  if (container.build)
    out.build = { context: container.build.context, dockerfile: container.build.dockerfile };
  if (container.entrypoint) out.entrypoint = container.entrypoint.map(escape);
  if (container.command) out.command = container.command.map(escape);
  if (Object.keys(container.environment).length > 0)
    out.environment = Object.fromEntries(
      Object.entries(container.environment).map(([name, value]) => [name, environmentValue(name, value)]),
    );
  if (container.workingDir) out.working_dir = escape(container.workingDir);
  if (container.user) out.user = escape(container.user);
  if (container.hostname) out.hostname = container.hostname;
  if (Object.keys(container.labels).length > 0) out.labels = escapeMap(container.labels);
  if (container.ports.length > 0) out.expose = container.ports.map(String);
  if (container.volumes.length > 0) {
    out.volumes = container.volumes.map(
      (mount) => `${mount.volume}:${escape(mount.target)}${mount.readOnly ? ':ro' : ''}`,
    );
  }
  if (container.dependsOn.length > 0) out.depends_on = [...container.dependsOn];
  if (container.healthcheck) {
    const check = container.healthcheck;
    out.healthcheck =
      check.test[0] === 'NONE'
        ? { disable: true }
        : {
            test: check.test.map(escape),
            interval: formatDuration(check.intervalMs),
            timeout: formatDuration(check.timeoutMs),
            retries: check.retries,
            start_period: formatDuration(check.startPeriodMs),
          };
  }
  out.restart =
    container.restart === 'on-failure' && container.restartMaxRetries !== undefined
      ? `on-failure:${container.restartMaxRetries}`
      : container.restart;
  out.init = container.init;
  const limits: Record<string, string | number> = {};
  if (container.limits.nanoCpus !== undefined) limits.cpus = String(container.limits.nanoCpus / 1e9);
  if (container.limits.memoryBytes !== undefined) limits.memory = formatBytes(container.limits.memoryBytes);
  if (container.limits.pids !== undefined) limits.pids = container.limits.pids;
  const deploy: Record<string, unknown> = {};
  if (container.replicas !== undefined) deploy.replicas = container.replicas;
  if (container.placement)
    deploy.placement = {
      ...(container.placement.constraints.length > 0 ? { constraints: container.placement.constraints } : {}),
      ...(container.placement.preferences.length > 0
        ? { preferences: container.placement.preferences.map((spread) => ({ spread })) }
        : {}),
    };
  const reservations: Record<string, string> = {};
  if (container.reservations?.nanoCpus !== undefined)
    reservations.cpus = String(container.reservations.nanoCpus / 1e9);
  if (container.reservations?.memoryBytes !== undefined)
    reservations.memory = formatBytes(container.reservations.memoryBytes);
  if (Object.keys(limits).length > 0 || Object.keys(reservations).length > 0)
    deploy.resources = {
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(Object.keys(reservations).length > 0 ? { reservations } : {}),
    };
  if (container.updateOrder) deploy.update_config = { order: container.updateOrder };
  if (Object.keys(deploy).length > 0) out.deploy = deploy;
  return out;
}
