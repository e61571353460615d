import { describe, expect, it } from 'vitest';
import {
  DEFAULT_QUERY,
  parseServicesQuery,
  servicesSearch,
  toApiQuery,
  withChange,
} from './services-query.ts';

describe('services list URL state', () => {
  it('reads every field from the URL and writes it back unchanged', () => {
    const search = '?page=3&per_page=50&status=failed&sort=updated_at&order=desc&search=web&customer_id=acme';
    const query = parseServicesQuery(search);
    expect(query).toEqual({
      page: 3,
      per_page: 50,
      status: 'failed',
      sort: 'updated_at',
      order: 'desc',
      search: 'web',
      customer_id: 'acme',
    });
    expect(servicesSearch(query)).toBe(search);
  });

  it('leaves defaults out of the URL', () => {
    expect(servicesSearch(DEFAULT_QUERY)).toBe('');
    expect(servicesSearch({ ...DEFAULT_QUERY, search: 'a b&c' })).toBe('?search=a+b%26c');
  });

  it('falls back to defaults for values a hand-edited URL may carry', () => {
    const query = parseServicesQuery(
      '?page=-2&per_page=7&status=exploded&sort=password&order=sideways&customer_id=../x&search=' +
        'x'.repeat(500),
    );
    expect({ ...query, search: '' }).toEqual(DEFAULT_QUERY);
    expect(query.search).toHaveLength(100);
    expect(parseServicesQuery('?page=1.5').page).toBe(1);
  });

  it('goes back to page 1 when a filter changes but keeps the filters when paging', () => {
    const onPage4 = { ...DEFAULT_QUERY, page: 4, status: 'running' as const };
    expect(withChange(onPage4, { search: 'db' })).toMatchObject({ page: 1, search: 'db', status: 'running' });
    expect(withChange(onPage4, { page: 5 })).toMatchObject({ page: 5, status: 'running' });
  });

  it('sends the API only the parameters that are set', () => {
    expect(toApiQuery(DEFAULT_QUERY)).toEqual({ page: 1, per_page: 20, sort: 'name', order: 'asc' });
    expect(toApiQuery({ ...DEFAULT_QUERY, status: 'stopped', search: 'x' })).toMatchObject({
      status: 'stopped',
      search: 'x',
    });
  });
});
