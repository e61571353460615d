import { describe, expect, it } from 'vitest';
import type { ComponentObservation, TaskObservation } from '../runtime/driver.js';
import { followedTargets } from './swarm-release.js';

// What the follower routes while Swarm replaces a web component's tasks: a new task only once it
// has run for the stabilisation window, as the single engine holds a new set back before the switch.
const NOW = 1_000_000;
const task = (
  port: number,
  deploymentId: string,
  runningFor?: number,
  state = 'running',
): TaskObservation => ({
  id: `task-${port}`,
  node: 'node-1',
  state,
  desiredState: 'running',
  deploymentId,
  endpoint: { host: '127.0.0.1', port },
  ...(runningFor === undefined ? {} : { runningSince: NOW - runningFor }),
});
const web = (deploymentId: string, tasks: TaskObservation[], standby = false): ComponentObservation => ({
  component: 'web',
  deploymentId,
  desiredReplicas: tasks.length,
  runningReplicas: tasks.length,
  ...(standby ? { standby: true as const } : {}),
  tasks,
});
const ports = (result: ReturnType<typeof followedTargets>) => result.targets.map((target) => target.port);

describe('followedTargets', () => {
  it('keeps a new task out until it has run for the window, while the old release or a standby answers', () => {
    const components = [web('new', [task(2, 'new', 1_999)]), web('old', [task(9, 'old', 60_000)], true)];
    expect(followedTargets(components, 'new', 2_000, NOW)).toEqual({
      targets: [{ host: '127.0.0.1', port: 9 }],
      includesRelease: false,
    });
  });

  it('adds the new task once it has run for the window, and says the release took traffic', () => {
    const components = [web('new', [task(2, 'new', 2_000)]), web('old', [task(9, 'old', 60_000)], true)];
    const followed = followedTargets(components, 'new', 2_000, NOW);
    expect(ports(followed).sort()).toEqual([2, 9]);
    expect(followed.includesRelease).toBe(true);
  });

  it('routes an unsettled new task when nothing else runs: one under watch answers, none does not', () => {
    const followed = followedTargets(
      [web('new', [task(2, 'new', 10), task(3, 'old', 0, 'shutdown')])],
      'new',
      2_000,
      NOW,
    );
    expect(ports(followed)).toEqual([2]);
    expect(followed.includesRelease).toBe(true);
  });

  it('treats a new task whose start time is unknown as unsettled', () => {
    const components = [web('mixed', [task(2, 'new'), task(4, 'old', 60_000)])];
    expect(ports(followedTargets(components, 'new', 2_000, NOW))).toEqual([4]);
  });

  it('with no window (0), follows every running task at once', () => {
    const components = [web('mixed', [task(2, 'new', 0), task(4, 'old', 60_000)])];
    expect(ports(followedTargets(components, 'new', 0, NOW)).sort()).toEqual([2, 4]);
  });
});
