import { describe, expect, it } from 'vitest';
import { defaultActionName, routeTarget } from './route-target.js';

describe('what a route acts on, from its pattern', () => {
  it.each([
    ['/api/services', { kind: 'collection', type: 'service' }],
    ['/api/auth/api-keys', { kind: 'collection', type: 'api_key' }],
    ['/api/templates', { kind: 'collection', type: null }],
    ['/api/auth/me', { kind: 'collection', type: null }],
    ['/api/services/:id', { kind: 'item', type: 'service', param: 'id' }],
    ['/api/services/:id/redeploy', { kind: 'item', type: 'service', param: 'id' }],
    // Routes other engineers add later are classified without being listed.
    ['/api/services/:id/rollback', { kind: 'item', type: 'service', param: 'id' }],
    ['/api/services/:id/deployments', { kind: 'item', type: 'service', param: 'id' }],
    ['/api/deployments/:id/cancel', { kind: 'item', type: 'deployment', param: 'id' }],
    ['/api/customers/:customerId', { kind: 'item', type: 'customer', param: 'customerId' }],
    ['/api/auth/api-keys/:id', { kind: 'item', type: 'api_key', param: 'id' }],
    ['/api/users/:id', { kind: 'item', type: 'user', param: 'id' }],
    // What a path cannot tell the owner of: nested, unknown or wildcard.
    ['/api/services/:id/webhook-deliveries/:deliveryId', { kind: 'other' }],
    ['/api/widgets/:id', { kind: 'other' }],
    ['/api/docs/assets/:file', { kind: 'other' }],
    ['/api/files/*', { kind: 'other' }],
  ])('%s → %j', (pattern, expected) => {
    expect(routeTarget(pattern)).toEqual(expected);
  });
});

describe('audit action names', () => {
  it.each([
    ['POST', '/api/services', 'services.create'],
    ['PATCH', '/api/services/:id', 'services.update'],
    ['DELETE', '/api/services/:id', 'services.delete'],
    ['POST', '/api/services/:id/redeploy', 'services.redeploy'],
    ['POST', '/api/deployments/:id/cancel', 'deployments.cancel'],
    ['POST', '/api/auth/api-keys', 'auth.api_keys.create'],
    ['DELETE', '/api/auth/api-keys/:id', 'auth.api_keys.delete'],
    ['PUT', '/api/customers/:id', 'customers.replace'],
  ])('%s %s → %s', (method, pattern, name) => {
    expect(defaultActionName(method, pattern)).toBe(name);
  });
});
