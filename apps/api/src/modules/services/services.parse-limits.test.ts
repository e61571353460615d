import { HOSTILE_YAML, interpolationBomb, legitCompose } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// Parsing cannot exhaust the API, and compose cannot ask for more than the platform allows:
// every hostile document gets a 400 problem naming the bound it passed (not a slow 201, not a
// 5xx), honest documents near the bounds are created, and nothing is stored for a refusal.
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness({
    CONTAINER_MAX_MEMORY_MB: '1024',
    CONTAINER_MAX_CPUS: '2',
    CONTAINER_MAX_PIDS: '1000',
  });
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

const create = (compose: string, variables?: Record<string, string>) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: admin.auth },
    payload: {
      name: uniqueName('parse'),
      customer_id: customerId,
      deploy_method: 'compose',
      compose,
      ...(variables ? { variables } : {}),
    },
  });

type Problem = { code: string; detail: string; errors: { path: string; message: string }[] };

describe('POST /api/services refuses documents built to exhaust the parser', () => {
  const bound: Record<string, RegExp> = {
    'billion laughs': /expands to more than/,
    'wide aliases': /expands to more than/,
    'nested small aliases': /expands to more than/,
    'merge key chain': /expands to more than/,
    'deep flow nesting': /nested deeper than 64 levels/,
    'deep closed flow nesting': /nested deeper than 64 levels/,
    'deep flow mappings': /nested deeper than 64 levels/,
    'deep block nesting': /nested deeper than 64 levels/,
    'deep compact sequences': /nested deeper than 64 levels/,
    'deep through aliases': /nested deeper than 64 levels/,
    'huge scalar aliased': /expands to more than 4 MiB/,
    'many items': /more than 150,000 YAML tokens/,
    'many keys': /more than 150,000 YAML tokens/,
    'self-referencing alias': /refers to a node that contains it/,
  };

  it.each(Object.keys(HOSTILE_YAML))('%s → 400 invalid_compose naming the bound', async (name) => {
    const response = await create(HOSTILE_YAML[name]!());
    expect(response.statusCode).toBe(400);
    const problem = json<Problem>(response);
    expect(problem.code).toBe('invalid_compose');
    expect(problem.errors).toEqual([{ path: '/body/compose', message: expect.stringMatching(bound[name]!) }]);
  });

  it('variables that would interpolate past 4 MiB → 400', async () => {
    const { compose, variables } = interpolationBomb();
    // 32 KiB values are within the variable limits; 6,000 uses of them are not within the budget.
    const response = await create(compose, variables);
    expect(response.statusCode).toBe(400);
    expect(json<Problem>(response).errors.map((error) => error.message)).toContain(
      'after interpolation the document exceeds 4 MiB',
    );
  });

  it('a refused document stores nothing', async () => {
    const name = uniqueName('bomb');
    await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth },
      payload: {
        name,
        customer_id: customerId,
        deploy_method: 'compose',
        compose: HOSTILE_YAML['wide aliases']!(),
      },
    });
    const list = await h.app.inject({
      url: `/api/services?search=${name}`,
      headers: { authorization: admin.auth },
    });
    expect(json<{ total: number }>(list).total).toBe(0);
  });

  it('a 250 KB honest compose of 20 services is created', async () => {
    const response = await create(legitCompose(20, 150, 60));
    expect(response.statusCode).toBe(201);
  });
});

describe('POST /api/services refuses limits above the ceilings', () => {
  const service = (limits: string) =>
    `services:\n  web:\n    image: local/busybox:1\n    deploy: {resources: {limits: ${limits}}}\n`;

  it.each([
    ['memory', '{memory: 2g}', /at most 1024M per container/],
    ['memory', '{memory: 1025m}', /at most 1024M per container/],
    ['cpus', '{cpus: 4}', /at most 2 CPUs per container/],
    ['pids', '{pids: 100000}', /at most 1000 processes per container/],
    ['pids', '{pids: -1}', /positive whole number/],
  ])('%s %s → 400 naming the field', async (key, limits, message) => {
    const response = await create(service(limits));
    expect(response.statusCode).toBe(400);
    expect(json<Problem>(response).errors).toContainEqual({
      path: `/body/compose/services/web/deploy/resources/limits/${key}`,
      message: expect.stringMatching(message),
    });
  });

  it('limits at the ceilings are accepted', async () => {
    const response = await create(service('{memory: 1024M, cpus: 2, pids: 1000}'));
    expect(response.statusCode).toBe(201);
  });
});

describe('JSON bodies cannot exhaust the API either', () => {
  it('a 1 MiB body of nested arrays → 4xx, not a crash', async () => {
    const depth = 500_000;
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth, 'content-type': 'application/json' },
      payload: `{"name":"x","variables":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
  });

  it('a deeply nested body with __proto__ keys (the JSON parser walks those) → 4xx', async () => {
    const depth = 100_000;
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth, 'content-type': 'application/json' },
      payload: `{"variables":${'{"__proto__":'.repeat(depth)}1${'}'.repeat(depth)}}`,
    });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
  });
});
