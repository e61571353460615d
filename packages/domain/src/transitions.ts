import { DomainError } from './errors.js';
import type { LifecycleAction, ServiceStatus } from './types.js';

/**
 * Which lifecycle action may run from which status (docs/api-decisions.md#transitions).
 * `noop` means the service is already where the action would take it: 200, nothing changes.
 */
type Verdict = 'run' | 'noop';

const TABLE: Record<LifecycleAction, Record<ServiceStatus, Verdict | 'conflict'>> = {
  start: { stopped: 'run', failed: 'run', running: 'noop', deploying: 'conflict' },
  stop: { running: 'run', failed: 'run', stopped: 'noop', deploying: 'conflict' },
  restart: { running: 'run', stopped: 'run', failed: 'run', deploying: 'conflict' },
};

export function lifecycleVerdict(action: LifecycleAction, status: ServiceStatus): Verdict {
  const verdict = TABLE[action][status];
  if (verdict === 'conflict') {
    throw new DomainError(
      'deployment_in_progress',
      `cannot ${action} the service while a deployment is in progress; wait for it to finish`,
    );
  }
  return verdict;
}

/** The status a successful lifecycle action leaves the service in. */
export function statusAfter(action: LifecycleAction): ServiceStatus {
  return action === 'stop' ? 'stopped' : 'running';
}

export const LIFECYCLE_MESSAGES: Record<LifecycleAction, { done: string; noop: string }> = {
  start: { done: 'Service started', noop: 'Service is already running' },
  stop: { done: 'Service stopped', noop: 'Service is already stopped' },
  restart: { done: 'Service restarted', noop: 'Service restarted' },
};
