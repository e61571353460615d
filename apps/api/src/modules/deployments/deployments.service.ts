import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError, type DeploymentStatus } from '@hostctl/domain';
import type { DeploymentsStore, DeploymentWithService } from '@hostctl/db';
import { deploymentChannel } from '@hostctl/queue';
import type { ChangeNotifier } from '../../live/change-notifier.js';
import type { Deployment, DeploymentLogLine } from './deployments.schemas.js';

const FINAL: ReadonlySet<DeploymentStatus> = new Set(['succeeded', 'failed', 'superseded', 'cancelled']);
/** Longest log a single response carries; clients continue with after_seq. */
const MAX_LINES_PER_READ = 5000;
/** Re-read at least this often even without a wake-up (a lost pub/sub message costs no more). */
const FALLBACK_POLL_MS = 2000;

export type DeploymentsService = ReturnType<typeof createDeploymentsService>;

export function isFinal(status: DeploymentStatus): boolean {
  return FINAL.has(status);
}

export function createDeploymentsService(deps: {
  deployments: DeploymentsStore;
  notifier: ChangeNotifier;
  prefix: string;
}) {
  const { deployments, notifier } = deps;

  async function visibleOr404(principal: Principal, id: string): Promise<DeploymentWithService> {
    const found = await deployments.findVisible(customerScope(principal), id);
    if (!found) throw new DomainError('not_found', `deployment ${id} not found`);
    return found;
  }

  async function logs(id: string, afterSeq: number): Promise<DeploymentLogLine[]> {
    const rows = await deployments.logsAfter(id, afterSeq, MAX_LINES_PER_READ);
    return rows.map((row) => ({
      seq: row.seq,
      timestamp: row.createdAt.toISOString(),
      stream: row.stream,
      message: row.message,
    }));
  }

  function toView(row: DeploymentWithService, lines: DeploymentLogLine[], afterSeq: number): Deployment {
    return {
      id: row.id,
      service_id: row.serviceId,
      trigger: row.trigger,
      deploy_method: row.service.deployMethod,
      status: row.status,
      step: row.step,
      commit: row.commit,
      image_digest: row.imageDigest,
      error: row.error,
      created_at: row.createdAt.toISOString(),
      started_at: row.startedAt?.toISOString() ?? null,
      finished_at: row.finishedAt?.toISOString() ?? null,
      logs: lines,
      last_seq: lines.at(-1)?.seq ?? afterSeq,
    };
  }

  return {
    /** Throws not_found unless the principal may see the deployment; the stream guard calls it too. */
    visibleOr404,

    /** The deployment with its log; with waitSeconds, answers once it is final or the wait ends. */
    async get(
      principal: Principal,
      id: string,
      options: { waitSeconds?: number; afterSeq?: number; signal?: AbortSignal },
    ) {
      let row = await visibleOr404(principal, id);
      const deadline = Date.now() + (options.waitSeconds ?? 0) * 1000;
      while (!isFinal(row.status) && Date.now() < deadline && !options.signal?.aborted) {
        await notifier.next(
          deploymentChannel(deps.prefix, id),
          Math.min(FALLBACK_POLL_MS, deadline - Date.now()),
          options.signal,
        );
        row = await visibleOr404(principal, id);
      }
      const afterSeq = options.afterSeq ?? 0;
      return toView(row, await logs(id, afterSeq), afterSeq);
    },

    /**
     * Follows a deployment: calls `emit` with new log lines and status changes until it is final.
     * Each round reads from PostgreSQL after the previous seq, so nothing is skipped or repeated.
     */
    async follow(
      principal: Principal,
      id: string,
      emit: (message: Record<string, unknown>) => void,
      signal: AbortSignal,
    ): Promise<void> {
      let lastSeq = 0;
      let lastStatus: string | undefined;
      let lastStep: string | null | undefined;
      for (;;) {
        const row = await visibleOr404(principal, id);
        const lines = await logs(id, lastSeq);
        for (const line of lines) emit({ type: 'log', ...line });
        lastSeq = lines.at(-1)?.seq ?? lastSeq;
        if (row.status !== lastStatus || row.step !== lastStep) {
          emit({ type: 'status', status: row.status, step: row.step, error: row.error });
          lastStatus = row.status;
          lastStep = row.step;
        }
        if (isFinal(row.status) && lines.length < MAX_LINES_PER_READ) {
          emit({ type: 'end', status: row.status, error: row.error });
          return;
        }
        if (signal.aborted) return;
        if (lines.length < MAX_LINES_PER_READ)
          await notifier.next(deploymentChannel(deps.prefix, id), FALLBACK_POLL_MS, signal);
      }
    },
  };
}
