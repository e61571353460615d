import { setTimeout as sleep } from 'node:timers/promises';
import { INSTANCE_LABEL, RUN_LABEL } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { containerSpec, type ServiceObjects, type SetObjects } from '../pipeline/service-objects.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { OneOffResult } from '../runtime/driver.js';
import type { LiveOutput } from './live-output.js';

/** Most output kept of a run: its end, where the error usually is (docs/jobs.md#limits). */
export const RUN_OUTPUT_MAX_BYTES = 256 * 1024;
/** Lines read back from the engine; more than fit in RUN_OUTPUT_MAX_BYTES of typical output. */
const OUTPUT_TAIL_LINES = 20_000;
const POLL_MS = 200;
const STOP_GRACE_S = 5;

interface OneOff {
  /** The release whose definition the command runs with (its plan, images pinned). */
  plan: Plan;
  /** A component of the plan; absent: the web component, else the first. */
  component?: string | null;
  command: string[];
  objects: ServiceObjects;
  /** The set whose network the container joins (its components answer by name there). */
  set: SetObjects;
  /** Names the container and labels it (RUN_LABEL). */
  runId: string;
  instance: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Masks secret values from the output before it is bounded and kept. */
  redact: (text: string) => string;
  /** Streams the output while the command runs (masked there too); absent: read at the end only. */
  live?: Pick<LiveOutput, 'attach' | 'drain'>;
}

/**
 * Runs a command once in a short-lived container that is the component's own container in all but
 * its command: the same image, variables, entrypoint, volumes, limits, capabilities and network
 * (containerSpec, the one description of a service container; the network's bridge is what the
 * egress policy applies to). It has no alias on the network, no ports, no health check and no
 * restart, so traffic for the component never reaches it. Removed whatever happens.
 */
export async function runOneOff(runtime: ContainerRuntime, job: OneOff): Promise<OneOffResult> {
  const component = job.component ?? job.plan.web?.container ?? job.plan.containers[0]?.name ?? '(none)';
  const container = job.plan.containers.find((item) => item.name === component);
  if (!container)
    throw new PermanentStepError(`the release has no component named ${component} to run the command in`);
  const base = containerSpec(container, job.objects, job.set, job.plan.containers.length);
  const name = `${job.objects.volume('run')}-${job.runId.replace(/-/g, '').slice(0, 12)}`;
  const spec = {
    ...base,
    name,
    command: job.command,
    labels: { ...container.labels, [INSTANCE_LABEL]: job.instance, [RUN_LABEL]: job.runId },
    exposedPorts: [],
    aliases: [],
    restart: { name: 'no' as const },
    init: true,
  };
  delete spec.healthcheck;
  // A retried attempt (the worker died mid-run) finds its own leftover under the same name.
  const leftover = await runtime.inspectContainer(name);
  if (leftover?.labels[RUN_LABEL] === job.runId) await runtime.removeContainer(leftover.id);
  const id = await runtime.createContainer(spec);
  try {
    await runtime.startContainer(id);
    // Docker replays a container's output from its start, so what came before this is not lost.
    await job.live?.attach(id);
    const deadline = Date.now() + job.timeoutMs;
    let state = await runtime.inspectContainer(id);
    while (state && (state.isRunning || state.status === 'created') && Date.now() < deadline) {
      if (job.signal?.aborted) break;
      await sleep(POLL_MS);
      state = await runtime.inspectContainer(id);
    }
    const timedOut = Boolean(state?.isRunning);
    if (timedOut) {
      await runtime.stopContainer(id, STOP_GRACE_S);
      state = await runtime.inspectContainer(id);
    }
    await job.live?.drain();
    const { output, truncated } = bounded(job.redact(await runtime.containerLogs(id, OUTPUT_TAIL_LINES)));
    return {
      exitCode: timedOut || !state ? null : state.exitCode,
      timedOut,
      output,
      outputTruncated: truncated,
    };
  } finally {
    await runtime.removeContainer(id);
  }
}

/** The end of the output, at most RUN_OUTPUT_MAX_BYTES, cut at a line start (either runtime's). */
export function bounded(raw: string): { output: string; truncated: boolean } {
  const lines = raw.split('\n').length;
  const bytes = Buffer.from(raw, 'utf8');
  if (bytes.length <= RUN_OUTPUT_MAX_BYTES) return { output: raw, truncated: lines > OUTPUT_TAIL_LINES };
  const tail = bytes.subarray(bytes.length - RUN_OUTPUT_MAX_BYTES).toString('utf8');
  const newline = tail.indexOf('\n');
  return { output: newline >= 0 ? tail.slice(newline + 1) : tail, truncated: true };
}
