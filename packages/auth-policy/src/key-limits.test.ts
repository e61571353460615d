import { describe, expect, it } from 'vitest';
import type { Role } from '@hostctl/domain';
import {
  decideKeyLimits,
  keyRequirement,
  narrowToKey,
  type KeyLimits,
  type KeyTarget,
} from './key-limits.js';
import { PERMISSIONS, type Permission } from './permissions.js';

const limits = (over: Partial<KeyLimits>): KeyLimits => ({
  serviceId: null,
  customerId: null,
  actions: null,
  ...over,
});
const serviceKey = limits({ serviceId: 'S', customerId: 'A' });
const customerKey = limits({ customerId: 'A' });
const readOnly = limits({ actions: ['read'] });
const deployKey = limits({ serviceId: 'S', customerId: 'A', actions: ['read', 'deploy'] });

const decide = (
  key: KeyLimits,
  permission: Permission,
  target: KeyTarget,
  extra: {
    declared?: 'deploy' | 'operate' | 'manage';
    lists?: boolean;
    serviceCustomer?: string | null;
  } = {},
) => {
  const decision = decideKeyLimits({
    limits: key,
    permission,
    requirement: keyRequirement(permission, extra.declared),
    target,
    appliesServiceLimit: extra.lists === true,
    ...(extra.serviceCustomer !== undefined
      ? { serviceFacts: extra.serviceCustomer === null ? null : { customerId: extra.serviceCustomer } }
      : {}),
  });
  return decision.allowed ? 'allowed' : decision.detail;
};

const none: KeyTarget = { kind: 'none' };
const service = (id: string): KeyTarget => ({ kind: 'service', id });
const deployment = (owner: { serviceId: string; customerId: string } | null): KeyTarget => ({
  kind: 'deployment',
  id: 'd',
  owner,
});

describe('the action each permission needs', () => {
  it.each([
    ['services:read', undefined, 'read'],
    ['templates:read', undefined, 'read'],
    ['customers:read', undefined, 'read'],
    ['services:create', undefined, 'manage'],
    ['services:delete', undefined, 'manage'],
    // An undeclared operate route needs the widest action: a new route never opens to narrow keys.
    ['services:operate', undefined, 'manage'],
    ['services:operate', 'deploy', 'deploy'],
    ['services:operate', 'operate', 'operate'],
  ] as const)('%s declaring %s → %s', (permission, declared, action) => {
    expect(keyRequirement(permission, declared)).toEqual({ kind: 'action', action });
  });

  it('administration has no action, the own profile needs none', () => {
    for (const permission of [
      'customers:manage',
      'users:manage',
      'api_keys:manage',
      'audit:read',
      'nodes:read',
      'nodes:manage',
      'certificates:read',
    ] as const)
      expect(keyRequirement(permission)).toEqual({ kind: 'admin' });
    expect(keyRequirement('profile:read')).toEqual({ kind: 'self' });
  });

  it('a route cannot declare an action its permission does not cover', () => {
    expect(() => keyRequirement('services:operate', 'read')).toThrow(/cannot declare/);
    expect(() => keyRequirement('services:delete', 'deploy')).toThrow(/cannot declare/);
    expect(() => keyRequirement('users:manage', 'manage')).toThrow(/cannot declare/);
  });

  it('every permission has a requirement', () => {
    for (const permission of PERMISSIONS) expect(keyRequirement(permission)).toBeDefined();
  });
});

describe('a service-limited key', () => {
  it.each([
    ['its service', 'services:read', service('S'), {}, 'allowed'],
    ['another service', 'services:read', service('T'), {}, 'this API key is limited to service S'],
    ['its deployment', 'services:read', deployment({ serviceId: 'S', customerId: 'A' }), {}, 'allowed'],
    [
      "another service's deployment",
      'services:read',
      deployment({ serviceId: 'T', customerId: 'A' }),
      {},
      'this API key is limited to service S',
    ],
    ['an unknown deployment', 'services:read', deployment(null), {}, 'this API key is limited to service S'],
    ['the list that narrows itself', 'services:read', none, { lists: true }, 'allowed'],
    ['a list that does not', 'services:read', none, {}, 'this API key is limited to service S'],
    ['the customers list', 'customers:read', none, {}, 'this API key is limited to service S'],
    [
      'its customer',
      'customers:read',
      { kind: 'customer', id: 'A' },
      {},
      'this API key is limited to service S',
    ],
    ['the template catalog', 'templates:read', none, {}, 'allowed'],
    ['its own profile', 'profile:read', none, {}, 'allowed'],
    ['creating a service', 'services:create', none, {}, 'this API key is limited to service S'],
    ['a nested resource', 'services:read', { kind: 'other' }, {}, 'this API key is limited to service S'],
  ] as const)('%s', (_label, permission, target, extra, expected) => {
    expect(decide(serviceKey, permission, target, extra)).toBe(expected);
  });

  it('never administers, whatever the target', () => {
    for (const permission of ['users:manage', 'customers:manage', 'api_keys:manage', 'audit:read'] as const)
      expect(decide(serviceKey, permission, none)).toMatch(/cannot administer/);
  });
});

describe('a customer-limited key', () => {
  it.each([
    ['a service of its customer', service('S'), 'A', 'allowed'],
    ['a service of another customer', service('S'), 'B', 'this API key is limited to customer A'],
    ['an unknown service', service('S'), null, 'this API key is limited to customer A'],
  ] as const)('%s', (_label, target, serviceCustomer, expected) => {
    expect(decide(customerKey, 'services:read', target, { serviceCustomer })).toBe(expected);
  });

  it.each([
    ['its deployment', deployment({ serviceId: 'S', customerId: 'A' }), 'allowed'],
    [
      'another deployment',
      deployment({ serviceId: 'S', customerId: 'B' }),
      'this API key is limited to customer A',
    ],
    ['its customer', { kind: 'customer', id: 'A' }, 'allowed'],
    ['another customer', { kind: 'customer', id: 'B' }, 'this API key is limited to customer A'],
    ['a list (narrowed by the principal)', none, 'allowed'],
    ['a user or key', { kind: 'other' }, 'this API key is limited to customer A'],
  ] as const)('%s', (_label, target, expected) => {
    expect(decide(customerKey, 'services:read', target)).toBe(expected);
  });
});

describe('an action-limited key', () => {
  it('a read-only key reads and does nothing else', () => {
    expect(decide(readOnly, 'services:read', service('S'))).toBe('allowed');
    expect(decide(readOnly, 'services:operate', service('S'), { declared: 'deploy' })).toBe(
      'this API key is limited to the actions read; this route needs deploy',
    );
    expect(decide(readOnly, 'services:delete', service('S'))).toMatch(/needs manage/);
    expect(decide(readOnly, 'profile:read', none)).toBe('allowed');
  });

  it('a read + deploy key of a service redeploys it, and neither restarts nor changes it', () => {
    expect(decide(deployKey, 'services:operate', service('S'), { declared: 'deploy' })).toBe('allowed');
    expect(decide(deployKey, 'services:operate', service('S'), { declared: 'operate' })).toMatch(
      /needs operate/,
    );
    expect(decide(deployKey, 'services:operate', service('S'))).toMatch(/needs manage/);
    expect(decide(deployKey, 'services:operate', service('T'), { declared: 'deploy' })).toMatch(/service S/);
  });
});

describe('narrowing the owner to the key', () => {
  const owner = (role: Role, customerId: string | null) => ({ role, customerId });
  it.each([
    [owner('admin', null), customerKey, 'A'],
    [owner('operator', null), serviceKey, 'A'],
    [owner('operator', 'A'), customerKey, 'A'],
    [owner('admin', null), readOnly, null],
    [owner('viewer', 'A'), readOnly, 'A'],
  ] as const)('%j with %j acts for customer %s', (who, key, customerId) => {
    expect(narrowToKey(who, key)).toEqual({ ...who, customerId, limits: key });
  });

  it.each([
    ['moved to another customer', owner('operator', 'B'), customerKey],
    ['an unscoped viewer, who sees nothing', owner('viewer', null), serviceKey],
  ] as const)('refuses a key whose owner is %s', (_label, who, key) => {
    expect(narrowToKey(who, key)).toBeNull();
  });
});
