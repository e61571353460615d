import { setTimeout as sleep } from 'node:timers/promises';
import type { PlanContainer } from '@hostctl/compose';
import type { ContainerRuntime, ContainerState } from '../adapters/runtime.js';
import { connects } from '../health/port-probe.js';
import { PermanentStepError } from './step-errors.js';

/**
 * Waits until a container is ready, bounded: running, and healthy when it has a health check; a
 * container with a port must accept a TCP connection on it (this is what the proxy will need);
 * one with neither must stay up for `stableMs`. A container that exits or restarts meanwhile
 * fails the step with its exit code and last output, which is what a person needs to fix it.
 */
export interface ReadinessOptions {
  timeoutMs: number;
  stableMs: number;
  signal?: AbortSignal;
}

export async function waitReady(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'containerLogs'>,
  containerId: string,
  container: PlanContainer,
  options: ReadinessOptions,
): Promise<{ ip?: string }> {
  const hasHealthcheck = container.healthcheck !== undefined && container.healthcheck.test[0] !== 'NONE';
  const check = container.healthcheck;
  // A health check may legitimately need its start period plus all its retries.
  const bound =
    hasHealthcheck && check
      ? Math.max(
          options.timeoutMs,
          check.startPeriodMs + (check.intervalMs + check.timeoutMs) * (check.retries + 1),
        )
      : options.timeoutMs;
  const deadline = Date.now() + bound;
  let runningSince: number | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    const state = await runtime.inspectContainer(containerId);
    if (!state) throw new PermanentStepError(`container ${container.name} disappeared`);
    // Docker resets RestartCount on every explicit start, so any restart since then is a crash.
    if (state.isRestarting || state.restartCount > 0 || !state.isRunning) {
      const last = await lastExit(runtime, containerId, state);
      const tail = (await runtime.containerLogs(containerId, 20)).trim();
      const what = state.isRunning || state.isRestarting ? 'keeps restarting' : 'exited';
      // Running again (not between restarts): its exit code is the new run's 0, not the crash's.
      const code =
        last.isRunning && !last.isRestarting
          ? `restarted ${state.restartCount} time(s)`
          : `exit code ${last.exitCode}${last.error ? `, ${last.error}` : ''}`;
      throw new PermanentStepError(
        `container ${container.name} ${what} (${code})${tail ? `; last output:\n${tail}` : ''}`,
      );
    }
    runningSince ??= Date.now();
    if (hasHealthcheck) {
      if (state.health === 'healthy') return state.ip ? { ip: state.ip } : {};
      if (state.health === 'unhealthy')
        throw new PermanentStepError(
          `container ${container.name} is unhealthy: its health check keeps failing`,
        );
    } else if (container.ports[0] !== undefined && state.ip) {
      if (await connects(state.ip, container.ports[0], 500)) return { ip: state.ip };
    } else if (Date.now() - runningSince >= options.stableMs) {
      return state.ip ? { ip: state.ip } : {};
    }
    if (Date.now() >= deadline) {
      const expectation = hasHealthcheck
        ? 'become healthy'
        : container.ports[0] !== undefined
          ? `accept connections on port ${container.ports[0]}`
          : 'start';
      throw new PermanentStepError(
        `container ${container.name} did not ${expectation} within ${Math.round(bound / 1000)}s`,
      );
    }
    await sleep(50, undefined, options.signal ? { signal: options.signal } : {});
  }
}

/**
 * The state that tells how a crashing container last ended. One that was restarted and runs again
 * shows exit code 0 (Docker resets it at each start): wait briefly for it to end again, so the
 * error names the real code ("exit code 0" for a container that exits with 3 misled; seen in CI).
 */
async function lastExit(
  runtime: Pick<ContainerRuntime, 'inspectContainer'>,
  containerId: string,
  state: ContainerState,
): Promise<ContainerState> {
  const deadline = Date.now() + 3000;
  let current = state;
  while (current.isRunning && !current.isRestarting && Date.now() < deadline) {
    await sleep(100);
    current = (await runtime.inspectContainer(containerId)) ?? current;
  }
  return current;
}
