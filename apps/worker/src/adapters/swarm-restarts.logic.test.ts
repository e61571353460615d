import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { stoppedComponentsOf } from './swarm-restarts.js';
import type { SwarmService } from './swarm-tasks.js';

const service = (id: string, hostctlId: string, component: string, replicas = 1, update?: string) =>
  ({
    ID: id,
    Spec: {
      Name: `${hostctlId}-${component}`,
      Labels: { [SERVICE_LABEL]: hostctlId, [COMPONENT_LABEL]: component },
      Mode: { Replicated: { Replicas: replicas } },
    },
    ...(update ? { UpdateStatus: { State: update } } : {}),
  }) as SwarmService;
const task = (serviceId: string, desired: string, state = 'running') => ({
  ID: `${serviceId}-${desired}-${state}`,
  ServiceID: serviceId,
  DesiredState: desired,
  Status: { State: state },
});

describe('components Swarm leaves down', () => {
  it('names a component whose only task stopped with nothing to replace it', () => {
    const stopped = stoppedComponentsOf(
      [service('s1', 'svc-a', 'web'), service('s2', 'svc-a', 'cache')],
      [task('s1', 'shutdown', 'failed'), task('s2', 'running')],
    );
    expect([...stopped]).toEqual([['svc-a', ['web']]]);
  });

  it('leaves alone what Swarm runs or is about to run again (a restart delay: desired "ready")', () => {
    const stopped = stoppedComponentsOf(
      [service('s1', 'svc-a', 'web'), service('s2', 'svc-b', 'web', 2)],
      [
        task('s1', 'shutdown', 'failed'),
        task('s1', 'ready', 'ready'),
        task('s2', 'running', 'starting'),
        task('s2', 'running'),
      ],
    );
    expect(stopped.size).toBe(0);
  });

  it('counts replicas: one of two tasks gone is a component to restart', () => {
    const stopped = stoppedComponentsOf(
      [service('s1', 'svc-a', 'web', 2)],
      [task('s1', 'running'), task('s1', 'shutdown', 'failed')],
    );
    expect(stopped.get('svc-a')).toEqual(['web']);
  });

  it('skips stopped services (0 replicas) and services Swarm is updating or rolling back', () => {
    const stopped = stoppedComponentsOf(
      [
        service('s1', 'svc-a', 'web', 0),
        service('s2', 'svc-b', 'web', 1, 'updating'),
        service('s3', 'svc-c', 'web', 1, 'rollback_started'),
        service('s4', 'svc-d', 'web', 1, 'rollback_completed'),
      ],
      [],
    );
    expect([...stopped.keys()]).toEqual(['svc-d']);
  });
});
