import type { Plan } from '@hostctl/compose';
import type { ExecResult } from '../adapters/container-exec.js';
import { PermanentStepError, messageOf } from '../pipeline/step-errors.js';
import type { RuntimeDriver } from '../runtime/driver.js';

type Log = (line: string) => Promise<void>;

/** How much of a hook's output goes into the reason of a failed backup (all of its tail goes to the log). */
const REASON_OUTPUT_CHARS = 1000;

interface ComponentHooks {
  component: string;
  pre?: string[];
  post?: string[];
  timeoutSeconds: number;
}

/**
 * The hooks the release's components declare (`x-hostctl.backup`), in the plan's order; a
 * component that declares only `verify` (run by a check, restore-test.ts) has none around a backup.
 */
export function backupHooksOf(plan: Plan): ComponentHooks[] {
  return plan.containers.flatMap(({ name, backupHooks: hooks }) =>
    hooks && (hooks.pre || hooks.post)
      ? [{ component: name, pre: hooks.pre, post: hooks.post, timeoutSeconds: hooks.timeoutSeconds }]
      : [],
  );
}

interface HookTarget {
  serviceId: string;
  /** The release whose containers run the hooks. */
  deploymentId: string;
  /** The service's status: hooks run only in a running service. */
  status: string;
}

/**
 * Runs `work` (the copy, with its stop when the method is `stop`) between the components' hooks
 * (docs/backups.md#hooks): every `pre` hook in the component's running container first, in plan
 * order; one that exits non-zero, cannot start or outlives its timeout fails the backup with its
 * output, and nothing is copied. Every `post` hook then runs whatever happened (after a failed pre
 * hook or copy too, so a partial dump is cleaned up); a failing post hook is logged and leaves the
 * outcome as it was (the snapshot is whole). A service that is not running has its volumes at rest:
 * no hook runs, and the log says so. Output lines go to the run's log, which masks the service's
 * variable values (volume-run.ts).
 */
export async function withBackupHooks<T>(
  driver: Pick<RuntimeDriver, 'execInComponent'>,
  target: HookTarget,
  hooks: ComponentHooks[],
  log: Log,
  work: () => Promise<T>,
): Promise<T> {
  if (hooks.length === 0) return work();
  if (target.status !== 'running') {
    await log(`the service is ${target.status}: its volumes are at rest, no backup hook runs`);
    return work();
  }
  try {
    for (const hook of hooks) {
      if (!hook.pre) continue;
      const result = await runHook(driver, target, hook, 'pre', hook.pre, log);
      const failure = failureOf(result, hook.timeoutSeconds);
      if (failure)
        throw new PermanentStepError(
          `pre hook of ${hook.component} ${failure}, nothing was copied${tailOf(result.output)}`,
        );
    }
    return await work();
  } finally {
    for (const hook of hooks) {
      if (!hook.post) continue;
      try {
        const result = await runHook(driver, target, hook, 'post', hook.post, log);
        const failure = failureOf(result, hook.timeoutSeconds);
        if (failure) await log(`post hook of ${hook.component} ${failure} (the backup's outcome stands)`);
      } catch (error) {
        await log(`post hook of ${hook.component} could not run: ${messageOf(error)}`);
      }
    }
  }
}

async function runHook(
  driver: Pick<RuntimeDriver, 'execInComponent'>,
  target: HookTarget,
  hook: ComponentHooks,
  phase: 'pre' | 'post',
  argv: string[],
  log: Log,
): Promise<ExecResult> {
  await log(`${phase} hook of ${hook.component}: ${JSON.stringify(argv)} (timeout ${hook.timeoutSeconds}s)`);
  const started = Date.now();
  const result = await driver
    .execInComponent(
      { serviceId: target.serviceId, deploymentId: target.deploymentId, component: hook.component },
      argv,
      { timeoutMs: hook.timeoutSeconds * 1000 },
    )
    .catch((error: unknown): never => {
      throw new PermanentStepError(`${phase} hook of ${hook.component} could not run: ${messageOf(error)}`);
    });
  const output = result.output.trimEnd();
  await log(
    `${phase} hook of ${hook.component}: ${result.timedOut ? 'timed out' : `exit ${result.exitCode}`} after ${Date.now() - started} ms${output ? `\n${output}` : ''}`,
  );
  return result;
}

function failureOf(result: ExecResult, timeoutSeconds: number): string | undefined {
  if (result.timedOut)
    return `timed out after ${timeoutSeconds}s (its process may still run in the container)`;
  if (result.exitCode !== 0) return `failed (exit ${result.exitCode ?? 'unknown'})`;
  return undefined;
}

const tailOf = (output: string): string => {
  const trimmed = output.trim();
  return trimmed ? `: ${trimmed.slice(-REASON_OUTPUT_CHARS)}` : '';
};
