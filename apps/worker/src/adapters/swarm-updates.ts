import type Docker from 'dockerode';
import { INSTANCE_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { fail } from './docker-errors.js';
import { isReplacingTasks } from './swarm-tasks.js';

/** Which of the installation's services Swarm is updating or rolling back right now. */
export interface SwarmUpdates {
  /** hostctl service ids with a component whose update (or its rollback) is under way. */
  replacing(): Promise<string[]>;
}

export function createSwarmUpdates(docker: Docker, instance: string): SwarmUpdates {
  return {
    async replacing() {
      const services = await docker
        .listServices({ filters: { label: [`${INSTANCE_LABEL}=${instance}`] } })
        .catch(fail('cannot list Swarm services'));
      const ids = services
        .filter(isReplacingTasks)
        .map((service) => service.Spec?.Labels?.[SERVICE_LABEL])
        .filter((id): id is string => Boolean(id));
      return [...new Set(ids)];
    },
  };
}
