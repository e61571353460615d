// The lifecycle table of docs/api-decisions.md ("Transitions"), written out case by case: every
// action from every status, with the verdict, the resulting status and the message the API sends.
import { describe, expect, it } from 'vitest';
import { isDomainError } from './errors.js';
import { LIFECYCLE_MESSAGES, lifecycleVerdict, statusAfter } from './transitions.js';
import { LIFECYCLE_ACTIONS, SERVICE_STATUSES, type LifecycleAction, type ServiceStatus } from './types.js';

const EXPECTED: [LifecycleAction, ServiceStatus, 'run' | 'noop' | 'conflict'][] = [
  ['start', 'stopped', 'run'],
  ['start', 'failed', 'run'],
  ['start', 'running', 'noop'],
  ['start', 'deploying', 'conflict'],
  ['stop', 'running', 'run'],
  ['stop', 'failed', 'run'],
  ['stop', 'stopped', 'noop'],
  ['stop', 'deploying', 'conflict'],
  ['restart', 'running', 'run'],
  ['restart', 'stopped', 'run'],
  ['restart', 'failed', 'run'],
  ['restart', 'deploying', 'conflict'],
];

describe('lifecycle transitions', () => {
  it('has an expectation for every action from every status', () => {
    const covered = new Set(EXPECTED.map(([action, status]) => `${action}/${status}`));
    for (const action of LIFECYCLE_ACTIONS)
      for (const status of SERVICE_STATUSES)
        expect(covered, `${action} from ${status}`).toContain(`${action}/${status}`);
  });

  it.each(EXPECTED)('%s from %s: %s', (action, status, expected) => {
    if (expected === 'conflict') {
      let caught: unknown;
      try {
        lifecycleVerdict(action, status);
      } catch (error) {
        caught = error;
      }
      expect(isDomainError(caught) && caught.code).toBe('deployment_in_progress');
      expect((caught as Error).message).toMatch(new RegExp(`cannot ${action}`));
    } else {
      expect(lifecycleVerdict(action, status)).toBe(expected);
    }
  });

  it('leaves a stopped service after stop and a running one after start and restart', () => {
    expect(statusAfter('stop')).toBe('stopped');
    expect(statusAfter('start')).toBe('running');
    expect(statusAfter('restart')).toBe('running');
  });

  it('answers with the messages the spec asks for: started, stopped, restarted', () => {
    expect(LIFECYCLE_MESSAGES.start.done).toMatch(/started/);
    expect(LIFECYCLE_MESSAGES.stop.done).toMatch(/stopped/);
    expect(LIFECYCLE_MESSAGES.restart.done).toMatch(/restarted/);
    expect(LIFECYCLE_MESSAGES.restart.noop).toMatch(/restarted/);
  });
});
