import type { Job } from 'bullmq';
import type { WorkerNodesStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { SwarmNodes } from '../adapters/swarm-nodes.js';
import { messageOf } from '../pipeline/step-errors.js';

/**
 * Applies an operator's drain or activate to the swarm. The request is read from the node row
 * (payloads carry ids only), so a job that runs late applies the latest request, and a job whose
 * request was already applied or replaced does nothing. A failure the engine reports is stored on
 * the node (`availability_error`) once the retries are spent, so the API can show it.
 */
export function createNodeAvailabilityProcessor(deps: {
  swarm: SwarmNodes;
  store: Pick<WorkerNodesStore, 'pendingRequest' | 'markApplied' | 'markFailed'>;
  /** Refreshes the snapshot after a change so tasks leaving a drained node show soon. */
  refresh: () => Promise<void>;
  logger: Logger;
}) {
  return async (job: Job<JobPayload<'node-availability'>>): Promise<void> => {
    const { nodeId } = job.data;
    const node = await deps.store.pendingRequest(nodeId);
    const requested = node?.requestedAvailability;
    if (!node || (requested !== 'active' && requested !== 'drain')) return;
    try {
      await deps.swarm.setAvailability(node.engineId, requested);
    } catch (error) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (lastAttempt) await deps.store.markFailed(nodeId, requested, messageOf(error));
      throw error;
    }
    await deps.store.markApplied(nodeId, requested);
    deps.logger.info({ nodeId, availability: requested }, 'node availability applied');
    await deps
      .refresh()
      .catch((error: unknown) =>
        deps.logger.warn(
          { nodeId, err: messageOf(error) },
          'node snapshot refresh after availability failed',
        ),
      );
  };
}
