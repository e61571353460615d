import { describe, expect, it } from 'vitest';
import type { ContainerState } from '../adapters/runtime.js';
import { assessHealth, type HealthFacts } from './health-assessment.js';

const running = (extra: Partial<ContainerState> = {}): ContainerState => ({
  id: 'c',
  name: 'c',
  labels: {},
  status: 'running',
  isRunning: true,
  isRestarting: false,
  exitCode: 0,
  restartCount: 0,
  ip: '172.17.0.9',
  ...extra,
});
const web = { container: 'web', port: 8080 };

describe('assessHealth', () => {
  it.each<[string, HealthFacts, string]>([
    ['no containers', { containers: [], web }, 'unhealthy'],
    [
      'nothing listens by design',
      { containers: [{ component: 'worker', state: running() }], web: null },
      'unknown',
    ],
    [
      'web port open',
      { containers: [{ component: 'web', state: running() }], web, isWebReachable: true },
      'healthy',
    ],
    [
      'web port closed',
      { containers: [{ component: 'web', state: running() }], web, isWebReachable: false },
      'unhealthy',
    ],
    [
      'check in its start period',
      { containers: [{ component: 'web', state: running({ health: 'starting' }) }], web },
      'starting',
    ],
    [
      'a sidecar exited while web serves',
      {
        containers: [
          { component: 'web', state: running() },
          { component: 'queue', state: running({ isRunning: false, status: 'exited', exitCode: 137 }) },
        ],
        web,
        isWebReachable: true,
      },
      'unhealthy',
    ],
    ['vanished container', { containers: [{ component: 'web', state: null }], web }, 'unhealthy'],
  ])('%s', (_name, facts, status) => {
    expect(assessHealth(facts).status).toBe(status);
  });

  it('flags a crash loop and names the container', () => {
    const result = assessHealth({
      containers: [
        { component: 'web', state: running({ isRestarting: true, isRunning: true, exitCode: 2 }) },
      ],
      web,
    });
    expect(result).toMatchObject({ status: 'unhealthy', isCrashLooping: true });
    expect(result.reason).toContain('container web keeps restarting (last exit code 2)');
  });
});
