import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import { isFinalRun, type RunsStore, type ServiceRun } from '@hostctl/db';
import type { LogEntry } from '@hostctl/queue';
import type { RunOutputReader } from '../../live/run-output-reader.js';
import type { RunOutput } from './runs.schemas.js';

export type RunOutputService = ReturnType<typeof createRunOutputService>;

/**
 * A run's output while it runs (docs/jobs.md#following-a-run): the worker's live stream of it,
 * and once the run is final the stored output, which stays the record. Reached through the
 * caller's customer scope like every run route: another customer's run is a 404.
 */
export function createRunOutputService(deps: {
  runs: Pick<RunsStore, 'findVisible'>;
  reader: RunOutputReader;
}) {
  async function visibleOr404(principal: Principal, id: string): Promise<ServiceRun> {
    const found = await deps.runs.findVisible(customerScope(principal), id);
    if (!found) throw new DomainError('not_found', `run ${id} not found`);
    return found;
  }

  return {
    visibleOr404,

    async snapshot(principal: Principal, id: string): Promise<RunOutput> {
      const run = await visibleOr404(principal, id);
      const entries = isFinalRun(run.status) ? storedEntries(run) : await deps.reader.snapshot(id);
      return { status: run.status as RunOutput['status'], entries };
    },

    /**
     * Emits the output from the run's start as it is printed, then one `end` message with the
     * final run's status and exit code. A run that is final already has its stored output sent.
     */
    async follow(
      principal: Principal,
      id: string,
      emit: (message: Record<string, unknown>) => void,
      signal: AbortSignal,
    ): Promise<void> {
      let run = await visibleOr404(principal, id);
      if (isFinalRun(run.status)) for (const entry of storedEntries(run)) emit({ ...entry });
      else {
        const isFinal = async () => isFinalRun((run = await visibleOr404(principal, id)).status);
        await deps.reader.follow(id, (entry) => emit({ ...entry }), isFinal, signal);
        if (signal.aborted) return;
        // The worker writes its end entry after the row is final: this reads the final row.
        run = await visibleOr404(principal, id);
      }
      emit({
        type: 'end',
        status: run.status,
        exit_code: run.exitCode,
        error: run.error,
        output_truncated: run.outputTruncated,
      });
    },
  };
}

/** The stored output (its last 256 KiB, masked) as one entry; none when the command printed nothing. */
function storedEntries(run: ServiceRun): LogEntry[] {
  if (run.output === '') return [];
  const at = run.finishedAt ?? run.createdAt;
  return [{ timestamp: at.toISOString(), stream: 'stdout', message: run.output }];
}
