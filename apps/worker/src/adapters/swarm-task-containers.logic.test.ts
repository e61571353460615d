import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { currentTasks, taskContainerState, taskSummary } from './swarm-task-containers.js';
import type { SwarmTask } from './swarm-tasks.js';

const labels = { [SERVICE_LABEL]: 'svc-1', [COMPONENT_LABEL]: 'web' };
const task = (overrides: Partial<SwarmTask> & { state?: string; healthCheck?: string[] }): SwarmTask => {
  const { state = 'running', healthCheck, ...rest } = overrides;
  return {
    ID: 'task1',
    NodeID: 'node1',
    Slot: 1,
    DesiredState: 'running',
    Spec: {
      ContainerSpec: { Labels: labels, ...(healthCheck ? { HealthCheck: { Test: healthCheck } } : {}) },
    },
    Status: {
      State: state,
      PortStatus: { Ports: [{ TargetPort: 8080, PublishedPort: 30001, PublishMode: 'host' }] },
    },
    ...rest,
  };
};
const node = { hostname: 'n1', address: '10.0.0.5' };

describe('Swarm tasks as the containers the observers watch', () => {
  it('keeps the tasks Swarm wants running and those still running while replaced, of the labels asked', () => {
    const tasks = [
      task({ ID: 'wanted', state: 'starting' }),
      task({ ID: 'replaced', DesiredState: 'shutdown', state: 'running' }),
      task({ ID: 'history', DesiredState: 'shutdown', state: 'failed' }),
      task({ ID: 'other', Spec: { ContainerSpec: { Labels: { [SERVICE_LABEL]: 'svc-2' } } } }),
    ];
    expect(currentTasks(tasks, { [SERVICE_LABEL]: 'svc-1' }).map((item) => item.ID)).toEqual([
      'wanted',
      'replaced',
    ]);
  });

  it('maps task states onto container states and names a task by component and slot', () => {
    expect(taskSummary(task({ state: 'running' }))).toEqual({
      id: 'task1',
      name: 'web.1',
      labels,
      state: 'running',
    });
    expect(taskSummary(task({ state: 'preparing' })).state).toBe('created');
    expect(taskSummary(task({ state: 'failed' })).state).toBe('exited');
  });

  it('reaches the web port where the node publishes it, not at the overlay address', () => {
    expect(taskContainerState(task({}), node).published).toEqual([
      { containerPort: 8080, host: '10.0.0.5', port: 30001 },
    ]);
    expect(taskContainerState(task({}), undefined).published).toBeUndefined();
  });

  it('reads health from the task: starting until the check passed, healthy once running', () => {
    const check = ['CMD', 'true'];
    expect(taskContainerState(task({ healthCheck: check, state: 'starting' }), node).health).toBe('starting');
    expect(taskContainerState(task({ healthCheck: check }), node).health).toBe('healthy');
    expect(taskContainerState(task({}), node).health).toBeUndefined();
    expect(taskContainerState(task({ healthCheck: ['NONE'] }), node).health).toBeUndefined();
  });

  it("reports a failed task's exit code and Swarm's error", () => {
    const failed = task({ state: 'failed' });
    failed.Status = { ...failed.Status, Err: 'task: non-zero exit (3)', ContainerStatus: { ExitCode: 3 } };
    expect(taskContainerState(failed, node)).toMatchObject({
      isRunning: false,
      exitCode: 3,
      error: 'task: non-zero exit (3)',
    });
  });
});
