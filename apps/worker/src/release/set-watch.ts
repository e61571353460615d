import { setTimeout as sleep } from 'node:timers/promises';
import type { Plan } from '@hostctl/compose';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { PermanentStepError } from '../pipeline/step-errors.js';

/**
 * Watches a verified set for `durationMs`: every container must stay running, never restart and
 * never turn unhealthy. This is what catches a release that passes its first health check and
 * crashes seconds later (before the switch: the old release never stopped serving; during the
 * drain: traffic goes back to it). A zero window checks once.
 */
const POLL_MS = 250;

export async function watchSet(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'containerLogs'>,
  plan: Plan,
  ids: Map<string, string>,
  durationMs: number,
  signal: AbortSignal,
  during: string,
): Promise<void> {
  const deadline = Date.now() + durationMs;
  for (;;) {
    signal.throwIfAborted();
    for (const container of plan.containers) {
      const id = ids.get(container.name);
      const state = id ? await runtime.inspectContainer(id) : null;
      if (!id || !state) throw new PermanentStepError(`container ${container.name} disappeared ${during}`);
      const problem =
        !state.isRunning && !state.isRestarting
          ? `exited ${during} (exit code ${state.exitCode})`
          : state.isRestarting || state.restartCount > 0
            ? `restarted ${during} (exit code ${state.exitCode})`
            : state.health === 'unhealthy'
              ? `became unhealthy ${during}`
              : undefined;
      if (problem) {
        const tail = (await runtime.containerLogs(id, 20)).trim();
        throw new PermanentStepError(
          `container ${container.name} ${problem}${tail ? `; last output:\n${tail}` : ''}`,
        );
      }
    }
    const left = deadline - Date.now();
    if (left <= 0) return;
    await sleep(Math.min(POLL_MS, left), undefined, { signal });
  }
}
