// The services list's filters, sort, search and page live in the URL so a view can be shared,
// bookmarked and restored with Back. Parsing is forgiving: anything invalid falls back to the default.
export const SERVICE_STATUSES = ['running', 'stopped', 'deploying', 'failed'] as const;
export const SORT_FIELDS = ['name', 'status', 'created_at', 'updated_at'] as const;
export const PAGE_SIZES = [20, 50, 100] as const;

export interface ServicesQuery {
  page: number;
  per_page: number;
  status: (typeof SERVICE_STATUSES)[number] | null;
  sort: (typeof SORT_FIELDS)[number];
  order: 'asc' | 'desc';
  search: string;
  customer_id: string | null;
}

export const DEFAULT_QUERY: ServicesQuery = {
  page: 1,
  per_page: 20,
  status: null,
  sort: 'name',
  order: 'asc',
  search: '',
  customer_id: null,
};

const oneOf = <T extends string>(values: readonly T[], value: string | null): T | null =>
  value !== null && (values as readonly string[]).includes(value) ? (value as T) : null;

export function parseServicesQuery(search: string): ServicesQuery {
  const params = new URLSearchParams(search);
  const page = Number(params.get('page'));
  const perPage = Number(params.get('per_page'));
  const customer = params.get('customer_id');
  return {
    page: Number.isInteger(page) && page >= 1 && page <= 1_000_000 ? page : DEFAULT_QUERY.page,
    per_page: (PAGE_SIZES as readonly number[]).includes(perPage) ? perPage : DEFAULT_QUERY.per_page,
    status: oneOf(SERVICE_STATUSES, params.get('status')),
    sort: oneOf(SORT_FIELDS, params.get('sort')) ?? DEFAULT_QUERY.sort,
    order: oneOf(['asc', 'desc'], params.get('order')) ?? DEFAULT_QUERY.order,
    search: (params.get('search') ?? '').slice(0, 100),
    customer_id: customer && /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(customer) ? customer : null,
  };
}

/** The query string for a query: defaults are left out, so the plain list is plain `/services`. */
export function servicesSearch(query: ServicesQuery): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(DEFAULT_QUERY) as (keyof ServicesQuery)[]) {
    const value = query[key];
    if (value !== null && value !== '' && value !== DEFAULT_QUERY[key]) params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A change of filter, sort or search starts again at page 1; only paging keeps the rest. */
export function withChange(query: ServicesQuery, change: Partial<ServicesQuery>): ServicesQuery {
  const paging = Object.keys(change).every((key) => key === 'page');
  return { ...query, ...change, page: paging ? (change.page ?? query.page) : 1 };
}

/** The API's query parameters for a query (nulls and empty search omitted). */
export function toApiQuery(query: ServicesQuery) {
  return {
    page: query.page,
    per_page: query.per_page,
    sort: query.sort,
    order: query.order,
    ...(query.status ? { status: query.status } : {}),
    ...(query.search ? { search: query.search } : {}),
    ...(query.customer_id ? { customer_id: query.customer_id } : {}),
  };
}
