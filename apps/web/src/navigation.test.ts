import { describe, expect, it } from 'vitest';
import { navFor } from './navigation.ts';
import { parseRoute } from './routes.ts';

const labels = (role: 'admin' | 'operator' | 'viewer', customer_id: string | null = null) =>
  navFor({ role, customer_id }).map((item) => item.label);

describe('navigation follows the role', () => {
  it('gives admins everything, operators no user admin, viewers nothing that creates', () => {
    expect(labels('admin')).toEqual([
      'Overview',
      'Services',
      'Variable groups',
      'Create',
      'API keys',
      'Customers',
      'Users',
      'Certificates',
    ]);
    expect(labels('operator')).toEqual([
      'Overview',
      'Services',
      'Variable groups',
      'Create',
      'API keys',
      'Customers',
      'Certificates',
    ]);
    expect(labels('viewer')).toEqual(['Overview', 'Services', 'Variable groups', 'API keys', 'Customers']);
  });

  it("hides the platform's certificates from a customer's own admins and operators (the API refuses them)", () => {
    expect(labels('admin', 'c1')).not.toContain('Certificates');
    expect(labels('operator', 'c1')).not.toContain('Certificates');
    expect(labels('operator', 'c1')).toContain('Customers');
  });

  it('links only to addresses the router knows', () => {
    for (const item of navFor({ role: 'admin', customer_id: null })) {
      expect(item.screens).toContain(parseRoute(item.to).screen);
    }
  });
});

describe('parseRoute', () => {
  it('maps every dashboard address to its screen', () => {
    expect(parseRoute('/')).toEqual({ screen: 'overview' });
    expect(parseRoute('/services/')).toEqual({ screen: 'services' });
    expect(parseRoute('/services/new')).toEqual({ screen: 'create' });
    expect(parseRoute('/services/abc')).toEqual({ screen: 'service', id: 'abc', tab: 'overview' });
    expect(parseRoute('/services/abc/logs')).toEqual({ screen: 'service', id: 'abc', tab: 'logs' });
    expect(parseRoute('/services/abc/jobs')).toEqual({ screen: 'service', id: 'abc', tab: 'jobs' });
    expect(parseRoute('/services/abc/terminal')).toEqual({ screen: 'service', id: 'abc', tab: 'terminal' });
    expect(parseRoute('/signed-out')).toEqual({ screen: 'signed-out' });
    expect(parseRoute('/customers/c%2F1/usage')).toEqual({ screen: 'usage', customerId: 'c/1' });
    expect(parseRoute('/variable-groups')).toEqual({ screen: 'variable-groups' });
    expect(parseRoute('/variable-groups/g1')).toEqual({ screen: 'variable-group', id: 'g1' });
    expect(parseRoute('/certificates')).toEqual({ screen: 'certificates' });
  });

  it('answers not-found for anything else, including undecodable ids', () => {
    expect(parseRoute('/services/abc/secrets')).toEqual({ screen: 'not-found' });
    expect(parseRoute('/services/%E0%A4%A')).toEqual({ screen: 'not-found' });
    expect(parseRoute('/admin')).toEqual({ screen: 'not-found' });
    expect(parseRoute('/customers/%E0%A4%A/usage')).toEqual({ screen: 'not-found' });
    expect(parseRoute('/variable-groups/g1/edit')).toEqual({ screen: 'not-found' });
    expect(parseRoute('/variable-groups/%E0%A4%A')).toEqual({ screen: 'not-found' });
  });
});
