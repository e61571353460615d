import type Docker from 'dockerode';
import { fail, toRuntimeError } from './docker-errors.js';

/** Query parameters of a service update that travel beside the spec (dockerode sends both). */
type UpdateBody = Docker.ServiceSpec & { rollback?: 'previous' };

/**
 * Writes a changed spec of a Swarm service, the one way the swarm adapters do it. Swarm versions
 * every spec and refuses a write based on a stale version ("update out of sequence", answered as
 * HTTP 500 rather than 409): the service is read again and the change applied to what it is now,
 * a few times at most.
 */
export async function updateSwarmService(
  docker: Docker,
  id: string,
  change: (current: Docker.Service) => UpdateBody,
  what = `update Swarm service ${id}`,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = (await docker
      .getService(id)
      .inspect()
      .catch(fail(`cannot inspect Swarm service ${id}`))) as Docker.Service;
    try {
      await docker.getService(id).update({ version: current.Version?.Index, ...change(current) });
      return;
    } catch (error) {
      if (attempt < 3 && /out of sequence/i.test(toRuntimeError(error, '').message)) continue;
      throw toRuntimeError(error, `cannot ${what}`);
    }
  }
}
