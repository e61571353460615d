import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, type HealthStatus } from '@hostctl/domain';
import type {
  AdvisoryLocks,
  HealthTarget,
  WorkerEvent,
  WorkerServiceStore,
  WorkerTelemetryStore,
} from '@hostctl/db';
import type { Logger } from 'pino';
import type { ContainerRuntime, ContainerState, ContainerSummary } from '../adapters/runtime.js';
import type { ContainerTelemetry } from '../adapters/telemetry.js';
import { assessHealth, type Assessment, type ObservedContainer } from './health-assessment.js';
import type { Leadership } from './leadership.js';
import { createPeriodic, forEachBounded } from './periodic.js';
import { probePort, probePublishedPort } from './port-probe.js';

/**
 * Checks every running service on an interval (on the leader replica only) and stores
 * health_status, health_last_check and health_consecutive_failures on the service row.
 *
 * - A failing check counts; the status turns `unhealthy` after FAILURE_THRESHOLD checks in a
 *   row, so a restart in progress or one slow accept does not flap the status.
 * - A `health` event (healthy/unhealthy) is written only when the status changes to one of them.
 * - A service whose container keeps restarting for CRASH_LOOP_CHECKS checks is moved to `failed`.
 *   Exited containers that Docker does not restart are the reconciler's (failCrashedServices);
 *   this covers the crash loop that the reconciler deliberately leaves to Docker's restart policy.
 * - Services that are not running are reset to `unknown`.
 */
export interface HealthMonitorDeps {
  store: Pick<WorkerTelemetryStore, 'listHealthTargets' | 'recordHealth' | 'resetInactiveHealth'>;
  services: Pick<WorkerServiceStore, 'setStatus'>;
  runtime: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>;
  telemetry: Pick<ContainerTelemetry, 'lastHealthOutput'>;
  locks: Pick<AdvisoryLocks, 'tryAcquire'>;
  leadership: Leadership;
  intervalMs: number;
  logger: Logger;
  probe?: (host: string, port: number) => Promise<boolean>;
}

export const FAILURE_THRESHOLD = 2;
export const CRASH_LOOP_CHECKS = 4;
const CONCURRENCY = 4;

export interface HealthSweep {
  checked: number;
  failed: number;
}

export function createHealthMonitor(deps: HealthMonitorDeps) {
  const probe = deps.probe ?? probePort;

  /** The web port where the host reaches it: published on a Swarm task's node, else on the bridge. */
  const probeWeb = async (state: ContainerState, port: number): Promise<boolean> => {
    const published = state.published?.find((entry) => entry.containerPort === port);
    if (published) return probePublishedPort(published.host, published.port);
    return state.ip ? probe(state.ip, port) : false;
  };

  const observe = async (target: HealthTarget, containers: ContainerSummary[]): Promise<Assessment> => {
    const observed: ObservedContainer[] = [];
    let isWebReachable: boolean | undefined;
    for (const container of containers) {
      const component = container.labels[COMPONENT_LABEL] ?? container.name;
      const state = await deps.runtime.inspectContainer(container.id);
      const item: ObservedContainer = { component, state };
      if (state?.health === 'unhealthy') {
        const output = await deps.telemetry.lastHealthOutput(container.id);
        if (output) item.healthOutput = output.replace(/\s+/g, ' ').slice(0, 200);
      }
      const isWeb = target.web?.container === component;
      if (isWeb && target.web && state?.isRunning && !state.isRestarting && !state.health)
        isWebReachable = await probeWeb(state, target.web.port);
      observed.push(item);
    }
    return assessHealth({
      containers: observed,
      web: target.web,
      ...(isWebReachable !== undefined ? { isWebReachable } : {}),
    });
  };

  const check = async (target: HealthTarget, containers: ContainerSummary[]): Promise<boolean> => {
    const assessment = await observe(target, containers);
    const isFailing = assessment.status === 'unhealthy';
    const failures = isFailing ? target.consecutiveFailures + 1 : 0;
    const status: HealthStatus = !isFailing
      ? assessment.status
      : failures >= FAILURE_THRESHOLD
        ? 'unhealthy'
        : target.healthStatus;
    const event = healthEvent(target.healthStatus, status, assessment.reason);
    await deps.store.recordHealth(
      target.id,
      { status, consecutiveFailures: failures, checkedAt: new Date() },
      event,
      healthNotification(target.healthStatus, status),
    );
    if (event)
      deps.logger.info({ serviceId: target.id, status, reason: assessment.reason }, 'health changed');
    if (assessment.isCrashLooping && failures >= CRASH_LOOP_CHECKS)
      return failCrashLoop(target.id, assessment.reason, failures);
    return false;
  };

  const failCrashLoop = async (serviceId: string, reason: string, failures: number): Promise<boolean> => {
    // A job holding the service lock is changing its containers right now: not a crash loop.
    const lease = await deps.locks.tryAcquire(serviceId);
    if (!lease) return false;
    try {
      const seconds = Math.round((failures * deps.intervalMs) / 1000);
      const message = `Service failed: ${reason}; it did not recover for ${seconds}s. Fix the cause, then start or redeploy it.`;
      const isFailed = await deps.services.setStatus(
        serviceId,
        'failed',
        { type: 'status', status: 'failed', message },
        ['running'],
      );
      if (isFailed) deps.logger.info({ serviceId, reason }, 'health: marked a crash-looping service failed');
      return isFailed;
    } finally {
      await lease.release();
    }
  };

  const runOnce = async (): Promise<HealthSweep | null> => {
    if (!(await deps.leadership.isLeader())) return null;
    await deps.store.resetInactiveHealth();
    const targets = await deps.store.listHealthTargets();
    if (targets.length === 0) return { checked: 0, failed: 0 };
    // One listing for all services; the service label alone, as the reconciler finds them.
    const byService = new Map<string, ContainerSummary[]>();
    for (const container of await deps.runtime.listContainers({ [OWNER_LABEL]: 'true' })) {
      const serviceId = container.labels[SERVICE_LABEL];
      if (!serviceId) continue;
      byService.set(serviceId, [...(byService.get(serviceId) ?? []), container]);
    }
    const sweep: HealthSweep = { checked: 0, failed: 0 };
    await forEachBounded(targets, CONCURRENCY, async (target) => {
      try {
        if (await check(target, byService.get(target.id) ?? [])) sweep.failed += 1;
        sweep.checked += 1;
      } catch (error) {
        deps.logger.warn({ serviceId: target.id, err: String(error) }, 'health check failed to run');
      }
    });
    return sweep;
  };

  const periodic = createPeriodic('health', deps.intervalMs, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}

export type HealthMonitor = ReturnType<typeof createHealthMonitor>;

/** An event only when the status becomes healthy or unhealthy (not for starting/unknown). */
function healthEvent(previous: HealthStatus, next: HealthStatus, reason: string): WorkerEvent | undefined {
  if (next === previous) return undefined;
  if (next === 'unhealthy')
    return { type: 'health', status: 'unhealthy', message: `Service is unhealthy: ${reason}` };
  if (next === 'healthy')
    return {
      type: 'health',
      status: 'healthy',
      message: `${previous === 'unhealthy' ? 'Service recovered' : 'Service is healthy'}: ${reason}`,
    };
  return undefined;
}

/** Subscribers hear of a service turning unhealthy, and of its recovery from unhealthy only. */
export function healthNotification(previous: HealthStatus, next: HealthStatus) {
  if (next === previous) return undefined;
  if (next === 'unhealthy') return 'service.unhealthy' as const;
  if (next === 'healthy' && previous === 'unhealthy') return 'service.recovered' as const;
  return undefined;
}
