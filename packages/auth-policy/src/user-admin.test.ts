import { describe, expect, it } from 'vitest';
import type { Role } from '@hostctl/domain';
import { can, PERMISSIONS } from './permissions.js';
import { customerScope } from './scope.js';
import { decideUserCreate, decideUserUpdate, grantableRoles, keyRevokeScope } from './user-admin.js';

const actor = (role: Role, customerId: string | null, userId = 'me') => ({ userId, role, customerId });
const rootAdmin = actor('admin', null);
const adminA = actor('admin', 'A');
const outcome = (d: ReturnType<typeof decideUserCreate>) => (d.allowed ? 'allowed' : d.reason);

describe('permissions by role', () => {
  const table: Record<Role, string[]> = {
    admin: [...PERMISSIONS],
    operator: [
      'services:read',
      'services:create',
      'services:operate',
      'services:delete',
      'templates:read',
      'customers:read',
      'customers:manage',
      'profile:read',
      'api_keys:manage',
      'nodes:read',
      'nodes:manage',
      'certificates:read',
      'notifications:read',
      'notifications:manage',
    ],
    viewer: [
      'services:read',
      'templates:read',
      'customers:read',
      'profile:read',
      'api_keys:manage',
      'notifications:read',
    ],
  };
  it.each(Object.entries(table))('%s holds exactly its permissions', (role, granted) => {
    expect(PERMISSIONS.filter((p) => can({ role: role as Role }, p))).toEqual(granted);
  });
  it('only admins manage users', () => {
    expect(can({ role: 'operator' }, 'users:manage')).toBe(false);
  });
});

describe('customer scope', () => {
  it.each([
    [actor('admin', null), { kind: 'all' }],
    [actor('operator', null), { kind: 'all' }],
    [actor('viewer', null), { kind: 'none' }],
    [actor('admin', 'A'), { kind: 'customer', customerId: 'A' }],
    [actor('operator', 'A'), { kind: 'customer', customerId: 'A' }],
    [actor('viewer', 'A'), { kind: 'customer', customerId: 'A' }],
  ])('%j → %j', (principal, scope) => expect(customerScope(principal)).toEqual(scope));
});

describe('grantable roles', () => {
  it.each([
    [rootAdmin, ['admin', 'operator', 'viewer']],
    [adminA, ['operator', 'viewer']],
    [actor('operator', null), []],
    [actor('viewer', 'A'), []],
  ])('%j may grant %j', (who, roles) => expect(grantableRoles(who)).toEqual(roles));
});

describe('creating users', () => {
  it.each([
    // who, role, customer, expected
    [rootAdmin, 'admin', null, 'allowed'],
    [rootAdmin, 'viewer', 'B', 'allowed'],
    [adminA, 'viewer', 'A', 'allowed'],
    [adminA, 'operator', 'A', 'allowed'],
    [adminA, 'admin', 'A', 'forbidden'],
    [adminA, 'admin', null, 'forbidden'],
    [adminA, 'viewer', null, 'forbidden'],
    [adminA, 'viewer', 'B', 'forbidden'],
    [actor('operator', null), 'viewer', null, 'forbidden'],
    [actor('operator', 'A'), 'viewer', 'A', 'forbidden'],
    [actor('viewer', null), 'viewer', null, 'forbidden'],
  ] as const)('%j creating %s of %s → %s', (who, role, customerId, expected) => {
    expect(outcome(decideUserCreate(who, { role, customerId }))).toBe(expected);
  });
});

describe('changing users', () => {
  const user = (id: string, role: Role, customerId: string | null) => ({ id, role, customerId });
  it.each([
    // Unscoped admin: anyone else, anything; itself only its name.
    [rootAdmin, user('x', 'viewer', null), { role: 'admin' }, 'allowed'],
    [rootAdmin, user('x', 'admin', null), { customerId: 'A' }, 'allowed'],
    [rootAdmin, user('x', 'viewer', 'A'), { customerId: null }, 'allowed'],
    [rootAdmin, user('me', 'admin', null), {}, 'allowed'],
    [rootAdmin, user('me', 'admin', null), { role: 'admin', customerId: null }, 'allowed'],
    [rootAdmin, user('me', 'admin', null), { role: 'viewer' }, 'forbidden'],
    [rootAdmin, user('me', 'admin', null), { customerId: 'A' }, 'forbidden'],
    // Scoped admin: operators and viewers of its customer, never scope, never admin.
    [adminA, user('x', 'viewer', 'A'), { role: 'operator' }, 'forbidden'],
    [adminA, user('x', 'viewer', 'A'), { role: 'viewer' }, 'allowed'],
    [adminA, user('x', 'operator', 'A'), { role: 'viewer' }, 'allowed'],
    [adminA, user('x', 'operator', 'A'), { customerId: 'A' }, 'allowed'],
    [adminA, user('x', 'viewer', 'A'), { role: 'admin' }, 'forbidden'],
    [adminA, user('x', 'viewer', 'A'), { customerId: null }, 'forbidden'],
    [adminA, user('x', 'viewer', 'A'), { customerId: 'B' }, 'forbidden'],
    [adminA, user('x', 'admin', 'A'), {}, 'forbidden'],
    [adminA, user('x', 'admin', 'A'), { role: 'viewer' }, 'forbidden'],
    [adminA, user('x', 'viewer', 'B'), {}, 'not_found'],
    [adminA, user('x', 'admin', null), { role: 'viewer' }, 'not_found'],
    [adminA, user('me', 'admin', 'A'), {}, 'allowed'],
    [adminA, user('me', 'admin', 'A'), { customerId: null }, 'forbidden'],
    [adminA, user('me', 'admin', 'A'), { role: 'operator' }, 'forbidden'],
    // Other roles never.
    [actor('operator', null), user('x', 'viewer', null), {}, 'forbidden'],
    [actor('operator', null, 'x'), user('x', 'operator', null), { role: 'admin' }, 'forbidden'],
    [actor('viewer', 'A', 'x'), user('x', 'viewer', 'A'), { customerId: null }, 'forbidden'],
  ] as const)('%j changing %j with %j → %s', (who, target, change, expected) => {
    expect(outcome(decideUserUpdate(who, target, change))).toBe(expected);
  });
});

describe('whose keys may be revoked', () => {
  it.each([
    [rootAdmin, { kind: 'any' }],
    [adminA, { kind: 'customer', userId: 'me', customerId: 'A', roles: ['operator', 'viewer'] }],
    [actor('operator', null), { kind: 'owner', userId: 'me' }],
    [actor('viewer', 'A'), { kind: 'owner', userId: 'me' }],
  ])('%j → %j', (who, scope) => expect(keyRevokeScope(who)).toEqual(scope));
});
