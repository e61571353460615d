import Docker from 'dockerode';
import { INSTANCE_LABEL, OWNER_LABEL } from '@hostctl/domain';

/**
 * Removes what one test installation (its QUEUE_PREFIX, the workers' `instance`) left on an
 * engine: Swarm services (on a manager), containers with their anonymous volumes, networks and
 * named volumes, and nobody else's. A suite's stack stops its workers before it calls this, so
 * nothing is re-created behind it; the worker's own reconciler never removes a running service's
 * containers, so without this every run's services stayed up on the dev engine.
 * Returns how many containers and Swarm services it removed.
 */
export async function removeInstanceObjects(
  instance: string,
  socketPath = '/var/run/docker.sock',
): Promise<number> {
  const docker = new Docker({ socketPath });
  const mine = { label: [`${OWNER_LABEL}=true`, `${INSTANCE_LABEL}=${instance}`] };
  const ignore = () => undefined;
  // Not a swarm manager: the engine refuses the listing (503), and there is nothing to remove.
  const services = await docker.listServices({ filters: mine }).catch(() => []);
  await Promise.all(services.map((service) => docker.getService(service.ID).remove().catch(ignore)));
  const containers = await docker.listContainers({ all: true, filters: mine });
  await Promise.all(
    containers.map((container) =>
      docker.getContainer(container.Id).remove({ force: true, v: true }).catch(ignore),
    ),
  );
  const networks = await docker.listNetworks({ filters: mine });
  await Promise.all(networks.map((network) => docker.getNetwork(network.Id).remove().catch(ignore)));
  const { Volumes } = await docker.listVolumes({ filters: mine });
  await Promise.all((Volumes ?? []).map((volume) => docker.getVolume(volume.Name).remove().catch(ignore)));
  return services.length + containers.length;
}
