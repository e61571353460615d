import { describe, expect, it } from 'vitest';
import { containerCount, parseCompose } from './compose.parser.js';
import { DEFAULT_CONTAINER_LIMITS } from './container-limits.js';
import { problemsOf, withService } from './test-helpers.js';

// Issue 27, class 7: placement is an operator allowlist and replicas are containers. The API test
// (apps/api/src/modules/services/services.placement-caps.test.ts) drives the same through POST.
const allowing = (...placementAllowed: string[]) => ({
  limits: { ...DEFAULT_CONTAINER_LIMITS, placementAllowed },
});
const constraint = (rule: string) => withService(`    deploy: {placement: {constraints: ["${rule}"]}}`);
const spread = (attribute: string) =>
  withService(`    deploy: {placement: {preferences: [{spread: ${attribute}}]}}`);

describe('placement constraints and preferences pass SWARM_PLACEMENT_ALLOWED', () => {
  it.each(['node.role == manager', 'node.hostname == n1', 'node.id == x', 'node.labels.zone == eu-1'])(
    'by default %s is refused, naming the attribute',
    (rule) => {
      const [problem] = problemsOf(constraint(rule));
      expect(problem).toEqual({
        path: 'services.web.deploy.placement.constraints[0]',
        message: expect.stringContaining(`${rule.split(' ')[0]} is not a placement attribute`),
      });
    },
  );

  it('a listed attribute is accepted, others stay refused', () => {
    expect(problemsOf(constraint('node.labels.zone == eu-1'), {}, allowing('node.labels.zone'))).toEqual([]);
    expect(problemsOf(spread('node.labels.zone'), {}, allowing('node.labels.zone'))).toEqual([]);
    expect(
      problemsOf(constraint('node.labels.zones == eu-1'), {}, allowing('node.labels.zone')),
    ).toHaveLength(1);
    expect(problemsOf(spread('node.labels.rack'), {}, allowing('node.labels.zone'))).toHaveLength(1);
  });

  it.each(['node.role == manager', 'node.role != worker', 'node.role==manager'])(
    '%s is refused even when node.role is listed',
    (rule) => {
      expect(problemsOf(constraint(rule), {}, allowing('node.role'))[0]?.message).toContain(
        'never placed on the swarm manager',
      );
    },
  );

  it('node.role == worker passes once node.role is listed', () => {
    expect(problemsOf(constraint('node.role == worker'), {}, allowing('node.role'))).toEqual([]);
  });
});

describe('replicas count toward SERVICE_MAX_CONTAINERS', () => {
  const components = (count: number, replicas: number) =>
    'services:\n' +
    Array.from(
      { length: count },
      (_, i) => `  c${i}:\n    image: local/busybox:1\n    deploy: {replicas: ${replicas}}\n`,
    ).join('');

  it('counts every replica of every component', () => {
    expect(containerCount(parseCompose(components(2, 3), {}).containers)).toBe(6);
    expect(containerCount(parseCompose(withService(''), {}).containers)).toBe(1);
  });

  it('20 × 10 is refused at the default of 20; the limit itself is accepted', () => {
    expect(problemsOf(components(20, 10))).toContainEqual({
      path: 'services',
      message: expect.stringContaining('would run 200 containers'),
    });
    expect(problemsOf(components(2, 10))).toEqual([]);
    const lower = { limits: { ...DEFAULT_CONTAINER_LIMITS, maxContainersPerService: 5 } };
    expect(problemsOf(components(2, 3), {}, lower)[0]?.message).toContain('at most 5 per service');
  });
});
