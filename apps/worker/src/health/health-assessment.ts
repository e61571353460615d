import type { HealthStatus } from '@hostctl/domain';
import type { ContainerState } from '../adapters/runtime.js';

/**
 * Turns what was observed about one service's containers into a health status and a reason a
 * person can act on. Pure: the monitor gathers the facts, this decides.
 *
 * - a container that is missing, exited or restarting, or whose Docker health check reports
 *   unhealthy, or a web port that refuses connections → `unhealthy`;
 * - else a Docker health check still in its start period → `starting`;
 * - else a passing health check or an accepting web port → `healthy`;
 * - else (no health check, no web port: nothing listens by design) → `unknown`.
 */
export interface ObservedContainer {
  component: string;
  /** null when the container vanished between listing and inspecting. */
  state: ContainerState | null;
  /** Output of the last Docker health check run, gathered for failing checks. */
  healthOutput?: string;
}

export interface HealthFacts {
  containers: ObservedContainer[];
  web: { container: string; port: number } | null;
  /** Result of the TCP probe of the web port; absent when no probe was made. */
  isWebReachable?: boolean;
}

export interface Assessment {
  status: HealthStatus;
  reason: string;
  /** Docker keeps restarting a container that keeps exiting. */
  isCrashLooping: boolean;
}

export function assessHealth(facts: HealthFacts): Assessment {
  if (facts.containers.length === 0)
    return {
      status: 'unhealthy',
      reason: 'its containers are missing; start or redeploy the service to recreate them',
      isCrashLooping: false,
    };
  const problems: string[] = [];
  const starting: string[] = [];
  const passing: string[] = [];
  let isCrashLooping = false;
  for (const { component, state, healthOutput } of facts.containers) {
    const name = `container ${component}`;
    if (!state) problems.push(`${name} disappeared`);
    else if (state.isRestarting) {
      isCrashLooping = true;
      problems.push(`${name} keeps restarting (last exit code ${state.exitCode}); its logs show why`);
    } else if (!state.isRunning) problems.push(`${name} exited with code ${state.exitCode}`);
    else if (state.health === 'unhealthy')
      problems.push(`${name} fails its health check${healthOutput ? ` (last output: ${healthOutput})` : ''}`);
    else if (state.health === 'starting') starting.push(`${name} has not passed its health check yet`);
    else if (state.health === 'healthy') passing.push(`${name} passes its health check`);
    else if (facts.web?.container === component && facts.isWebReachable !== undefined) {
      const port = facts.web.port;
      if (facts.isWebReachable) passing.push(`${name} accepts connections on port ${port}`);
      else
        problems.push(
          `${name} does not accept connections on port ${port}; check that the process listens on 0.0.0.0:${port}`,
        );
    }
  }
  if (problems.length > 0) return { status: 'unhealthy', reason: problems.join('; '), isCrashLooping };
  if (starting.length > 0) return { status: 'starting', reason: starting.join('; '), isCrashLooping };
  if (passing.length > 0) return { status: 'healthy', reason: passing.join('; '), isCrashLooping };
  return {
    status: 'unknown',
    reason: 'nothing to check: no health check and no web port',
    isCrashLooping,
  };
}
