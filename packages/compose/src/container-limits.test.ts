import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { containerLimitPolicy, DEFAULT_CONTAINER_LIMITS } from './container-limits.js';
import { problemsOf, withService } from './test-helpers.js';

const MIB = 1024 * 1024;
const policy = containerLimitPolicy({
  CONTAINER_DEFAULT_MEMORY_MB: 256,
  CONTAINER_MAX_MEMORY_MB: 1024,
  CONTAINER_DEFAULT_CPUS: 0.5,
  CONTAINER_MAX_CPUS: 2,
  CONTAINER_DEFAULT_PIDS: 100,
  CONTAINER_MAX_PIDS: 1000,
  SERVICE_MAX_CONTAINERS: 20,
  SWARM_PLACEMENT_ALLOWED: '',
});
const limitsOf = (extra: string) =>
  parseCompose(withService(extra), {}, { limits: policy }).containers[0]!.limits;

describe('every container has memory, CPU and process limits', () => {
  it('a service that says nothing gets the operator defaults', () => {
    expect(limitsOf('')).toEqual({ memoryBytes: 256 * MIB, nanoCpus: 500_000_000, pids: 100 });
  });

  it('without a policy the built-in defaults apply (never unlimited)', () => {
    expect(parseCompose(withService(''), {}).containers[0]!.limits).toEqual({
      memoryBytes: DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes,
      nanoCpus: DEFAULT_CONTAINER_LIMITS.defaultNanoCpus,
      pids: DEFAULT_CONTAINER_LIMITS.defaultPids,
    });
  });

  it('a service may ask for less or more within the ceilings; the rest stays default', () => {
    expect(limitsOf('    deploy: {resources: {limits: {memory: 1g}}}')).toEqual({
      memoryBytes: 1024 * MIB,
      nanoCpus: 500_000_000,
      pids: 100,
    });
    expect(limitsOf('    deploy: {resources: {limits: {cpus: "2", pids: 1000, memory: 64M}}}')).toEqual({
      memoryBytes: 64 * MIB,
      nanoCpus: 2_000_000_000,
      pids: 1000,
    });
  });

  it.each([
    ['memory above the ceiling', '{memory: 1025M}', 'memory', /at most 1024M per container/],
    ['memory in bytes above the ceiling', '{memory: 1073741825}', 'memory', /at most 1024M/],
    ['memory absurdly large', '{memory: 9999999g}', 'memory', /at most 1024M/],
    ['cpus above the ceiling', '{cpus: 2.5}', 'cpus', /at most 2 CPUs/],
    ['cpus as a string above the ceiling', '{cpus: "64"}', 'cpus', /at most 2 CPUs/],
    ['cpus zero', '{cpus: 0}', 'cpus', /number of CPUs/],
    ['cpus negative', '{cpus: -1}', 'cpus', /number of CPUs/],
    ['pids above the ceiling', '{pids: 1001}', 'pids', /at most 1000 processes/],
    ['pids unlimited (-1 in compose)', '{pids: -1}', 'pids', /positive whole number/],
    ['pids zero', '{pids: 0}', 'pids', /positive whole number/],
  ])('refuses %s, naming the field', (_name, limits, key, message) => {
    const errors = problemsOf(
      withService(`    deploy: {resources: {limits: ${limits}}}`),
      {},
      { limits: policy },
    );
    expect(errors).toContainEqual({
      path: `services.web.deploy.resources.limits.${key}`,
      message: expect.stringMatching(message),
    });
  });

  it('a ceiling cannot be dodged through an anchor or a variable', () => {
    const anchored =
      'x-big: &big {resources: {limits: {memory: 8g}}}\nservices:\n  web:\n    image: a\n    deploy: *big\n';
    expect(problemsOf(anchored, {}, { limits: policy })).toContainEqual(
      expect.objectContaining({ path: 'services.web.deploy.resources.limits.memory' }),
    );
    const variable = withService('    deploy: {resources: {limits: {memory: "${MEM}"}}}');
    expect(problemsOf(variable, { MEM: '64g' }, { limits: policy })).toContainEqual(
      expect.objectContaining({ path: 'services.web.deploy.resources.limits.memory' }),
    );
  });
});
