import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test-support/harness.js';
import { startDevIdpProcess, type DevIdpProcess } from '../modules/auth/test-support/dev-idp-process.js';
import { seedKey } from '../modules/auth/test-support/auth-harness.js';

/**
 * Bad input is a 4xx problem, never a 5xx: every route of the route table is fed hostile path
 * parameters, query values, bodies, content types and headers, and every answer must be below
 * 500 and, when it is an error, an RFC 9457 problem body. Routes are read from the app, so a new
 * route is covered without touching this file.
 */
let h: Harness;
let idp: DevIdpProcess;
let admin: string;
/** Real ids per route prefix, so probes get past "not found" to the code that uses the value. */
let realIds: [prefix: string, id: string][];

beforeAll(async () => {
  idp = await startDevIdpProcess({ accounts: [], redirectUris: [], postLogoutRedirectUris: [] });
  h = await createHarness({ OIDC_ISSUER: idp.issuer });
  const root = await h.user('admin');
  admin = root.auth;
  const service = await h.createService(admin);
  const customer = await h.customer();
  const other = await h.user('viewer', customer.id);
  const key = await seedKey(h.store, other.id);
  realIds = [
    ['/api/services/', service.id],
    ['/api/deployments/', service.deploy_job_id],
    ['/api/customers/', customer.id],
    ['/api/users/', other.id],
    ['/api/auth/api-keys/', key.id],
    ['/api/docs/assets/', 'swagger-ui.css'],
  ];
}, 60_000);
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

interface Probe {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

const LONG = 'a'.repeat(5000);

/** Path parameter values: NUL, overlong, encoded slashes and dots, unicode, broken escapes. */
const PARAM_VALUES = [
  '%00',
  'abc%00def',
  LONG,
  'a%2Fb',
  '..%2F..%2Fetc',
  '%2e%2e',
  '%E2%9C%93%F0%9F%92%A9',
  '%ff%fe',
  '%E0%A4%A',
  '%',
  'a%5Cb',
  '%20',
];

/** Query values by schema type. */
const STRING_VALUES = [
  '%00',
  'x%00y',
  encodeURIComponent(LONG),
  '%ff',
  '%E0%A4%A',
  '%',
  '%5C',
  '%25',
  '_',
  "'",
  '%F0%9F%92%A9',
];
const INTEGER_VALUES = [
  '99999999999999999999',
  '2147483648',
  '9007199254740993',
  '-1',
  '-99999999999999999999',
  '1.5',
  '1e3',
  '1e400',
  '0x10',
  'NaN',
  'Infinity',
  'abc',
  '',
  '%00',
];
const DATE_VALUES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '275760-09-13T00:00:01Z',
  '+275760-09-13T00:00:00Z',
  '9999-12-31T23:59:60Z',
  '2024-02-30T00:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-01-01',
  '2024-01-01T25:00:00Z',
  '2024-01-01T00:00:00+99:00',
  'yesterday',
  '%00',
];
const BOOLEAN_VALUES = ['maybe', '%00', '2'];

type JsonSchema = {
  type?: string;
  format?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
};

function valuesFor(schema: JsonSchema): string[] {
  const types = [schema.type, ...(schema.anyOf ?? []).map((s) => s.type)];
  if (schema.format === 'date-time') return DATE_VALUES;
  if (types.includes('integer') || types.includes('number')) return INTEGER_VALUES;
  if (types.includes('boolean')) return BOOLEAN_VALUES;
  return STRING_VALUES;
}

/** Body values by schema type: wrong types, NUL, huge numbers, nesting. */
function bodyValuesFor(schema: JsonSchema): unknown[] {
  const common: unknown[] = [null, { nested: { deeper: 1 } }, [1, 2], 1e308, -1, 1.5, true];
  if (schema.type === 'string') return [...common, 'x\u0000y', '\u0000', 'a'.repeat(2_000_000 / 2), '\ud800'];
  if (schema.type === 'integer' || schema.type === 'number')
    return [...common, 99999999999999999999, 2147483648, '1', '\u0000'];
  if (schema.type === 'object')
    return [
      ...common,
      { A: 'x\u0000y' },
      { A: { nested: 'x' } },
      { A: 42 },
      { 'bad key': 'x' },
      { '\u0000': 'x' },
      { A: 'a'.repeat(900_000) },
    ];
  if (schema.type === 'array')
    return [...common, ['x\u0000y'], [LONG], ['a'.repeat(300)], [{}], ['-.example']];
  return common;
}

function fill(url: string, value?: string): string {
  const real = realIds.find(([prefix]) => url.startsWith(prefix))?.[1] ?? 'nonexistent-id';
  return url.replace(/:[A-Za-z_]+/g, value ?? real);
}

function methodsOf(route: RouteOptions): string[] {
  return ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
}

const DEEP = '['.repeat(100_000) + ']'.repeat(100_000);

/** Raw body and content-type edges, for every method that may carry a body. */
const BODY_EDGES: { name: string; headers: Record<string, string>; payload: string | Buffer }[] = [
  { name: 'text/plain', headers: { 'content-type': 'text/plain' }, payload: '{"a":1}' },
  { name: 'form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1&b=2' },
  {
    name: 'multipart',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    payload: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
  },
  { name: 'merge-patch', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"a":1}' },
  {
    name: 'latin1 charset',
    headers: { 'content-type': 'application/json; charset=latin1' },
    payload: '{"a":"\xe9"}',
  },
  { name: 'bogus charset', headers: { 'content-type': 'application/json; charset=ebcdic' }, payload: '{}' },
  { name: 'garbage content-type', headers: { 'content-type': ';;;/' }, payload: '{}' },
  { name: 'no content-type', headers: {}, payload: '{"a":1}' },
  { name: 'empty json', headers: { 'content-type': 'application/json' }, payload: '' },
  { name: 'null', headers: { 'content-type': 'application/json' }, payload: 'null' },
  { name: 'array', headers: { 'content-type': 'application/json' }, payload: '[]' },
  { name: 'string', headers: { 'content-type': 'application/json' }, payload: '"x"' },
  { name: 'number', headers: { 'content-type': 'application/json' }, payload: '1e999' },
  { name: 'truncated', headers: { 'content-type': 'application/json' }, payload: '{"a":' },
  {
    name: 'duplicate keys',
    headers: { 'content-type': 'application/json' },
    payload: '{"name":"a","name":"b"}',
  },
  { name: 'deep nesting', headers: { 'content-type': 'application/json' }, payload: DEEP },
  {
    name: 'invalid utf-8',
    headers: { 'content-type': 'application/json' },
    payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  },
  { name: 'bom', headers: { 'content-type': 'application/json' }, payload: '\ufeff{}' },
  { name: 'proto', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1}}' },
  {
    name: 'constructor',
    headers: { 'content-type': 'application/json' },
    payload: '{"constructor":{"prototype":{}}}',
  },
  { name: 'nul in json', headers: { 'content-type': 'application/json' }, payload: '{"name":"a\\u0000b"}' },
  {
    name: 'too large',
    headers: { 'content-type': 'application/json' },
    payload: `{"a":"${'x'.repeat(1_100_000)}"}`,
  },
];

/** Header edges: malformed credentials and cookies. */
const HEADER_EDGES: Record<string, string>[] = [
  { authorization: 'Bearer' },
  { authorization: 'Basic Zm9vOmJhcg==' },
  { authorization: `Bearer ${'x'.repeat(8000)}` },
  { authorization: 'Bearer hk_%00' },
  { authorization: 'Bearer a b c' },
  { cookie: 'session=%' },
  { cookie: `session=${'x'.repeat(4000)}` },
  { cookie: 'session=a; session=b; =; ;;' },
  { cookie: 'session="unterminated' },
];

function probesFor(route: RouteOptions): Probe[] {
  const probes: Probe[] = [];
  const auth = { authorization: admin };
  const schema = (route.schema ?? {}) as { querystring?: JsonSchema; body?: JsonSchema };
  for (const method of methodsOf(route)) {
    const hasParams = route.url.includes(':');
    if (hasParams)
      for (const value of PARAM_VALUES) probes.push({ method, url: fill(route.url, value), headers: auth });
    for (const [name, property] of Object.entries(schema.querystring?.properties ?? {})) {
      for (const value of valuesFor(property)) {
        probes.push({ method, url: `${fill(route.url)}?${name}=${value}`, headers: auth });
      }
    }
    probes.push({ method, url: `${fill(route.url)}?unknown%00=1&%ff=%00`, headers: auth });
    for (const headers of HEADER_EDGES) probes.push({ method, url: fill(route.url), headers });
    if (method === 'GET' || method === 'DELETE') continue;
    for (const edge of BODY_EDGES) {
      probes.push({
        method,
        url: fill(route.url),
        headers: { ...auth, ...edge.headers },
        payload: edge.payload,
      });
    }
    for (const [name, property] of Object.entries(schema.body?.properties ?? {})) {
      for (const value of bodyValuesFor(property)) {
        probes.push({
          method,
          url: fill(route.url),
          headers: { ...auth, 'content-type': 'application/json' },
          payload: JSON.stringify({ [name]: value }),
        });
      }
    }
  }
  return probes;
}

/** Why the answer is wrong, or undefined when it is a proper answer. */
function problemWith(response: LightMyRequestResponse): string | undefined {
  if (response.statusCode >= 500) return `status ${response.statusCode}: ${response.body.slice(0, 200)}`;
  if (response.statusCode < 400) return undefined;
  const type = String(response.headers['content-type']);
  if (!type.startsWith('application/problem+json')) return `${response.statusCode} with content-type ${type}`;
  let body: {
    status?: unknown;
    title?: unknown;
    detail?: unknown;
    code?: unknown;
    errors?: { path?: unknown }[];
  };
  try {
    body = JSON.parse(response.body) as typeof body;
  } catch {
    return `${response.statusCode} with a body that is not JSON`;
  }
  if (body.status !== response.statusCode)
    return `body status ${String(body.status)} ≠ ${response.statusCode}`;
  if (typeof body.title !== 'string' || typeof body.detail !== 'string') return 'no title or detail';
  if (
    body.code === 'validation_failed' &&
    body.errors?.some((e) => typeof e.path !== 'string' || !e.path.startsWith('/'))
  )
    return 'a validation error without a path';
  return undefined;
}

const describeProbe = (probe: Probe) =>
  `${probe.method} ${probe.url.slice(0, 100)} ${JSON.stringify(probe.headers ?? {})
    .replace(/Bearer hsk_\w+/, 'Bearer <admin>')
    .slice(0, 100)} ${String(probe.payload ?? '').slice(0, 60)}`;

describe('every route answers hostile input with a 4xx problem', () => {
  it('walks the whole route table', async () => {
    // DELETE last: a probe that succeeds must not remove the resource the other probes use.
    const apiRoutes = h.routes
      .filter((route) => route.url.startsWith('/api/'))
      .sort((a, b) => Number(methodsOf(a).includes('DELETE')) - Number(methodsOf(b).includes('DELETE')));
    expect(apiRoutes.length).toBeGreaterThan(15);
    let count = 0;
    const failures: string[] = [];
    for (const route of apiRoutes) {
      for (const probe of probesFor(route)) {
        const response = await h.app.inject({
          method: probe.method as 'GET',
          url: probe.url,
          headers: probe.headers ?? {},
          ...(probe.payload !== undefined ? { payload: probe.payload } : {}),
        });
        const wrong = problemWith(response);
        if (wrong) failures.push(`${describeProbe(probe)} → ${wrong}`);
        count++;
      }
    }
    expect(failures).toEqual([]);
    expect(count).toBeGreaterThan(1000);
  }, 300_000);
});
