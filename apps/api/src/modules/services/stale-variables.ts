import { DomainError } from '@hostctl/domain';
import { StaleVariablesError } from '@hostctl/db';

/**
 * How many times a variable change is merged again after another change landed between its read
 * and its write. Each round at least one of the racing writers succeeds, so this bounds the wait
 * of a burst of that many concurrent changes to one service; past it the caller gets a retryable
 * 409 rather than a write that drops someone else's.
 */
const ATTEMPTS = 10;

/** Runs `change` (read, merge, conditional write) again while its read went stale. */
export async function mergeAgainWhileStale<T>(change: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await change();
    } catch (error) {
      if (!(error instanceof StaleVariablesError)) throw error;
      if (attempt >= ATTEMPTS)
        throw new DomainError(
          'conflict',
          `the variables of service ${error.serviceId} kept changing under this request: send it again`,
        );
    }
  }
}
