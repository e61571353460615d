import type { Plan } from '@hostctl/compose';

/**
 * How a release replaces the previous one. start-first (the default) brings the new set up beside
 * the old one and switches traffic only once it proved healthy: no gap, no request lost. A
 * container that mounts a volume goes stop-first instead, because two writers on one volume (two
 * databases on one data directory) are worse than a short gap; its compose can still ask
 * `deploy.update_config.order: start-first` when it knows its software copes.
 */
export type UpdateOrder = 'start-first' | 'stop-first';

export function chooseUpdateOrder(plan: Plan): { order: UpdateOrder; reason: string } {
  const asked = plan.containers.filter((container) => container.updateOrder === 'stop-first');
  if (asked.length > 0)
    return { order: 'stop-first', reason: `the compose asks stop-first for ${names(asked)}` };
  const mounting = plan.containers.filter((container) => container.volumes.length > 0);
  const unconfirmed = mounting.filter((container) => container.updateOrder !== 'start-first');
  if (unconfirmed.length > 0)
    return {
      order: 'stop-first',
      reason: `${names(unconfirmed)} ${unconfirmed.length === 1 ? 'mounts' : 'mount'} a volume (two writers on one volume are worse than a short gap; deploy.update_config.order: start-first overrides)`,
    };
  if (mounting.length > 0)
    return {
      order: 'start-first',
      reason: `the compose asks start-first for ${names(mounting)} despite the volume`,
    };
  return { order: 'start-first', reason: 'no container mounts a volume' };
}

const names = (containers: { name: string }[]) => containers.map((container) => container.name).join(', ');
