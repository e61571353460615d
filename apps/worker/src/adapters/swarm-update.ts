import type Docker from 'dockerode';
import { fail, toRuntimeError } from './docker-errors.js';
import type { RegistryAuth } from './registry-auth.js';

/** A changed spec, and `rollback: 'previous'` to ask Swarm for the previous spec instead. */
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
  auth?: RegistryAuth,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = (await docker
      .getService(id)
      .inspect()
      .catch(fail(`cannot inspect Swarm service ${id}`))) as Docker.Service;
    try {
      const { rollback, ...spec } = change(current);
      // Query and body apart: given one object, docker-modem sends all of it as the query string
      // too, tenant variables included. The credentials become the X-Registry-Auth header; without
      // them Swarm keeps those the spec has (registryAuthFrom=spec).
      await docker.getService(id).update({
        _query: { version: current.Version?.Index, ...(rollback ? { rollback } : {}) },
        _body: spec,
        ...(auth ? { authconfig: auth } : {}),
      });
      return;
    } catch (error) {
      if (attempt < 3 && /out of sequence/i.test(toRuntimeError(error, '').message)) continue;
      throw toRuntimeError(error, `cannot ${what}`);
    }
  }
}
