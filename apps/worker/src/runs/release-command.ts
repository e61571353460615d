import type { Plan } from '@hostctl/compose';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { RuntimeDriver } from '../runtime/driver.js';

/** How long a release command may run; the deployment's own timeout (DEPLOY_TIMEOUT_MS) still applies. */
const RELEASE_COMMAND_TIMEOUT_MS = 10 * 60_000;
/** Lines of its output copied into the deployment log: its end, where the error is. */
const LOGGED_LINES = 500;

/**
 * The plan's release command (docs/jobs.md#release-command), run after the images are ready and
 * before anything of the new release is created: a non-zero exit (or a timeout) is a permanent
 * failure of the deployment, and since nothing of the new release exists yet, the release that
 * serves keeps serving. The command runs on the serving release's network, so a migration reaches
 * the service's database by its component name; with no release serving (a first deploy), on the
 * new release's own network. The runtime runs it (a container on the single engine, a Swarm job
 * under RUNTIME=swarm: RuntimeDriver.runOnce), so both gate a deployment the same way.
 */
export async function runReleaseCommand(
  runOnce: RuntimeDriver['runOnce'],
  run: {
    serviceId: string;
    deploymentId: string;
    log: DeployLog;
    signal: AbortSignal;
    servingDeploymentId: string | undefined;
  },
  plan: Plan & { release: NonNullable<Plan['release']> },
): Promise<void> {
  const { log } = run;
  const { component, command } = plan.release;
  await log.info(`Running the release command in ${component}: ${JSON.stringify(command)}`);
  const result = await runOnce({
    serviceId: run.serviceId,
    releaseId: run.deploymentId,
    plan,
    component,
    command,
    networkOf: run.servingDeploymentId ?? run.deploymentId,
    runId: run.deploymentId,
    timeoutMs: RELEASE_COMMAND_TIMEOUT_MS,
    signal: run.signal,
    // Each line goes to the deploy log, whose redactor masks every variable value (plain ones too).
    redact: (text) => text,
  });
  const lines = result.output.replace(/\n$/, '').split('\n');
  if (result.outputTruncated || lines.length > LOGGED_LINES)
    await log.info(`(release command output: only its last lines are kept)`);
  for (const line of lines.slice(-LOGGED_LINES)) if (line !== '') await log.info(`release: ${line}`);
  if (result.timedOut)
    throw new PermanentStepError(
      `the release command did not finish within ${RELEASE_COMMAND_TIMEOUT_MS / 1000} s and was stopped; the previous release keeps serving`,
    );
  if (result.exitCode !== 0)
    throw new PermanentStepError(
      `the release command exited with ${result.exitCode ?? 'no exit code'}; the previous release keeps serving`,
    );
  await log.info('The release command succeeded');
}
