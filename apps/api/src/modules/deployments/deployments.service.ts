import { credentialAllows, customerScope, type Principal } from '@hostctl/auth-policy';
import type { FastifyBaseLogger } from 'fastify';
import { DomainError, isFinalDeployment } from '@hostctl/domain';
import type { CancelOutcome, DeploymentsStore, DeploymentWithService, ServicesStore } from '@hostctl/db';
import { deploymentChannel } from '@hostctl/queue';
import type { ChangeNotifier } from '../../live/change-notifier.js';
import type { Deployment, DeploymentList, DeploymentLogLine } from './deployments.schemas.js';
import { toSummary } from './deployments.mapper.js';
import { describeChange } from '../services/rollback-refusals.js';

/** Longest log a single response carries; clients continue with after_seq. */
const MAX_LINES_PER_READ = 5000;
/** Re-read at least this often even without a wake-up (a lost pub/sub message costs no more). */
const FALLBACK_POLL_MS = 2000;

export type DeploymentsService = ReturnType<typeof createDeploymentsService>;

export function createDeploymentsService(deps: {
  deployments: DeploymentsStore;
  services: Pick<ServicesStore, 'findById'>;
  notifier: ChangeNotifier;
  /** Publishes a wake-up on the deployment's channel (followers re-read the row). */
  wake: (deploymentId: string) => Promise<unknown>;
  prefix: string;
  log: Pick<FastifyBaseLogger, 'warn'>;
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
      ...toSummary(row),
      deploy_method: row.service.deployMethod,
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
      while (!isFinalDeployment(row.status) && Date.now() < deadline && !options.signal?.aborted) {
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

    /** A page of the service's deployments, newest first (docs/deployments.md#history). */
    async history(
      principal: Principal,
      serviceId: string,
      page: { page: number; perPage: number },
    ): Promise<DeploymentList> {
      if (!(await deps.services.findById(customerScope(principal), serviceId)))
        throw new DomainError('not_found', `service ${serviceId} not found`);
      const { rows, total } = await deployments.listForService(serviceId, page);
      return { data: rows.map(toSummary), total, page: page.page, per_page: page.perPage };
    },

    /**
     * Cancels a queued or running deployment (docs/deployments.md#cancel): the row is final at once;
     * a worker running it sees that within a second, stops, removes what it started and leaves the
     * previous release serving. The answer is the deployment without its log (`logs` is empty and
     * `last_seq` 0: GET it to read the log). Cancelling a change of the service's variables or
     * compose undoes what `manage` did, so a deploy token without `manage` may not.
     */
    async cancel(principal: Principal, id: string): Promise<Deployment> {
      await visibleOr404(principal, id);
      const outcome = await deployments.cancel(id, {
        mayChangeDefinition: credentialAllows(principal, 'manage'),
      });
      if (!outcome.cancelled) throw notCancellable(id, outcome);
      await deps.wake(id).catch((error: unknown) => {
        // Followers re-read every 2 s anyway: a lost wake-up is a delay, not a wrong answer.
        deps.log.warn({ err: error, deploymentId: id }, 'deployment wake-up not published');
      });
      return toView(await visibleOr404(principal, id), [], 0);
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
        if (isFinalDeployment(row.status) && lines.length < MAX_LINES_PER_READ) {
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

function notCancellable(id: string, outcome: Extract<CancelOutcome, { cancelled: false }>): DomainError {
  if ('needsManage' in outcome)
    return new DomainError(
      'forbidden',
      `deployment ${id} changes the service's ${describeChange(outcome.changed)}; cancelling it needs an API key with the manage action, which this one lacks`,
    );
  if (outcome.status === null) return new DomainError('not_found', `deployment ${id} not found`);
  if (outcome.status === 'running' || outcome.status === 'queued') {
    return new DomainError(
      'conflict',
      `deployment ${id} is already replacing the previous release (step ${outcome.step ?? 'retire'}); it can no longer be cancelled`,
    );
  }
  return new DomainError(
    'conflict',
    `deployment ${id} is already ${outcome.status}; only a queued or running deployment can be cancelled`,
  );
}
