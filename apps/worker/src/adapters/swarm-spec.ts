import type Docker from 'dockerode';
import {
  CONTAINER_CAPABILITIES,
  DEFAULT_CONTAINER_LIMITS,
  type Plan,
  type PlanContainer,
} from '@hostctl/compose';
import {
  COMPONENT_LABEL,
  DEPLOYMENT_LABEL,
  INSTANCE_LABEL,
  OWNER_LABEL,
  SERVICE_LABEL,
  dockerNamePrefix,
} from '@hostctl/domain';
import type { Labels } from './runtime.js';
import type { Release } from '../runtime/driver.js';

/**
 * A plan as Swarm services (pure: no engine here, so every mapping is unit-tested). One Swarm
 * service per component, all on one overlay network per hostctl service, each reachable there by
 * its component name. A new release is an update of the same Swarm services, so Swarm itself does
 * the start-first replacement, the monitoring and the rollback (docs/multi-host.md).
 */
const NS_PER_MS = 1_000_000;
const STOP_GRACE_NS = 10_000 * NS_PER_MS;

export interface SwarmNames {
  network: string;
  service(component: string): string;
  /** The standby's Swarm service: `--` never appears in a component's name (compose.parser.ts). */
  standby: string;
  volume(name: string): string;
  /** Labels of everything the service owns (networks, volumes, Swarm services). */
  labels: Labels;
  /** Finds the service's objects whatever the installation label says. */
  selector: Labels;
}

export function swarmNames(serviceId: string, instance: string): SwarmNames {
  const prefix = dockerNamePrefix(serviceId);
  return {
    network: `${prefix}-net`,
    service: (component) => `${prefix}-${component}`,
    standby: `${prefix}--standby`,
    // The single engine's volume names: a service keeps its data when an installation migrates.
    volume: (name) => `${prefix}-${name}`,
    labels: { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId, [INSTANCE_LABEL]: instance },
    selector: { [SERVICE_LABEL]: serviceId },
  };
}

export interface SpecContext {
  names: SwarmNames;
  /** How long Swarm watches updated tasks before it calls an update done (stabilization + drain). */
  monitorMs: number;
  /** Node the service's volumes live on: local volumes pin a stateful component to one node. */
  volumeNode?: string;
  /** The platform's own placement constraints (EGRESS_PLACEMENT), before the compose file's. */
  platformConstraints?: string[];
}

export function swarmServiceSpec(
  container: PlanContainer,
  release: Release,
  context: SpecContext,
): Docker.ServiceSpec {
  const { names } = context;
  const platformLabels = {
    ...names.labels,
    [DEPLOYMENT_LABEL]: release.deploymentId,
    [COMPONENT_LABEL]: container.name,
  };
  const memory = container.limits.memoryBytes ?? DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes;
  const update: Docker.UpdateConfig = {
    Parallelism: 1,
    Order: container.updateOrder ?? 'start-first',
    FailureAction: 'rollback',
    Monitor: context.monitorMs * NS_PER_MS,
    MaxFailureRatio: 0,
  };
  // Swarm requires every constraint: the compose file's can narrow the platform's, never widen them.
  const constraints = [...(context.platformConstraints ?? []), ...(container.placement?.constraints ?? [])];
  if (container.volumes.length > 0 && context.volumeNode) constraints.push(`node.id==${context.volumeNode}`);
  return {
    Name: names.service(container.name),
    Labels: platformLabels,
    TaskTemplate: {
      ContainerSpec: {
        Image: container.image,
        ...(container.entrypoint ? { Command: container.entrypoint } : {}),
        ...(container.command ? { Args: container.command } : {}),
        Env: Object.entries(container.environment).map(([key, value]) => `${key}=${value}`),
        ...(container.workingDir ? { Dir: container.workingDir } : {}),
        ...(container.user ? { User: container.user } : {}),
        ...(container.hostname ? { Hostname: container.hostname } : {}),
        // Platform labels last: a tenant label can never override them.
        Labels: { ...container.labels, ...platformLabels },
        Init: container.init,
        StopGracePeriod: STOP_GRACE_NS,
        ...(container.healthcheck ? { HealthCheck: healthCheck(container.healthcheck) } : {}),
        Mounts: container.volumes.map((mount) => ({
          Type: 'volume' as const,
          Source: names.volume(mount.volume),
          Target: mount.target,
          ReadOnly: mount.readOnly,
          VolumeOptions: { NoCopy: false, Labels: names.labels } as Docker.MountSettings['VolumeOptions'],
        })),
        // As on the single engine: only the capabilities images need to start as root and drop privileges.
        CapabilityDrop: ['ALL'],
        CapabilityAdd: [...CONTAINER_CAPABILITIES],
      },
      Resources: {
        Limits: {
          MemoryBytes: memory,
          NanoCPUs: container.limits.nanoCpus ?? DEFAULT_CONTAINER_LIMITS.defaultNanoCpus,
          Pids: container.limits.pids ?? DEFAULT_CONTAINER_LIMITS.defaultPids,
        },
        ...(container.reservations
          ? {
              Reservations: {
                ...(container.reservations.memoryBytes
                  ? { MemoryBytes: container.reservations.memoryBytes }
                  : {}),
                ...(container.reservations.nanoCpus ? { NanoCPUs: container.reservations.nanoCpus } : {}),
              },
            }
          : {}),
      },
      RestartPolicy: restartPolicy(container),
      Placement: {
        ...(constraints.length > 0 ? { Constraints: constraints } : {}),
        ...(container.placement?.preferences.length
          ? {
              Preferences: container.placement.preferences.map((spread) => ({
                Spread: { SpreadDescriptor: spread },
              })),
            }
          : {}),
      },
      Networks: [{ Target: names.network, Aliases: [container.name] }],
    },
    Mode: { Replicated: { Replicas: container.replicas ?? 1 } },
    UpdateConfig: update,
    // Rolling back must not wait out another monitor period before the old release serves again.
    RollbackConfig: { ...update, FailureAction: 'pause', Monitor: 0 },
    // This kernel kind has no IPVS for virtual IPs (nor the routing mesh's published ports): DNS
    // round robin inside the overlay, and the web component's port published in host mode on
    // whichever node each task runs, a port of the engine's choosing that the proxy is routed to.
    EndpointSpec: {
      Mode: 'dnsrr',
      ...(release.plan.web?.container === container.name
        ? { Ports: [{ Protocol: 'tcp', TargetPort: release.plan.web.port, PublishMode: 'host' }] }
        : {}),
    },
  };
}

function healthCheck(check: NonNullable<PlanContainer['healthcheck']>) {
  return {
    Test: check.test,
    Interval: check.intervalMs * NS_PER_MS,
    Timeout: check.timeoutMs * NS_PER_MS,
    Retries: check.retries,
    StartPeriod: check.startPeriodMs * NS_PER_MS,
  };
}

function restartPolicy(container: PlanContainer): Docker.TaskRestartPolicy {
  switch (container.restart) {
    case 'no':
      return { Condition: 'none' };
    case 'on-failure':
      return {
        Condition: 'on-failure',
        ...(container.restartMaxRetries !== undefined ? { MaxAttempts: container.restartMaxRetries } : {}),
        Delay: 1000 * NS_PER_MS,
      };
    default:
      return { Condition: 'any', Delay: 1000 * NS_PER_MS };
  }
}

/**
 * What Swarm cannot honour from a plan, said on the deployment rather than dropped silently.
 * `restart: unless-stopped` (the compose default) is honoured: it runs as `any`, and "unless
 * stopped" is hostctl's stop, which scales the Swarm service to 0 so nothing restarts it.
 */
export function swarmWarnings(plan: Plan): string[] {
  const warnings: string[] = [];
  for (const container of plan.containers) {
    const at = `services.${container.name}`;
    if (container.dependsOn.length > 0)
      warnings.push(
        `${at}.depends_on: Swarm starts components in any order; ${container.name} must retry until ${container.dependsOn.join(', ')} answer`,
      );
    if (container.volumes.length > 0 && (container.replicas ?? 1) > 1)
      warnings.push(
        `${at}.volumes: volumes are local to one node, so all ${container.replicas} replicas are placed on that node and share them`,
      );
  }
  return warnings;
}
