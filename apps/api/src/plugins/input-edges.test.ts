import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@hostctl/domain';
import { createHarness, json, type Harness } from '../test-support/harness.js';

/**
 * The reported examples of class 9 and their neighbours, with exact answers (the route-table fuzz
 * in input-fuzz.test.ts only asserts "a 4xx problem"). Real PostgreSQL and Redis; the HTTP-level
 * cases go through a real socket.
 */
let h: Harness;
let admin: string;
let service: { id: string; deploy_job_id: string };
let host: string;

beforeAll(async () => {
  h = await createHarness();
  admin = (await h.user('admin')).auth;
  service = await h.createService(admin);
  host = await h.listen();
}, 60_000);
afterAll(async () => h?.close());

type Problem = { status: number; title: string; detail: string; code: string; errors?: { path: string }[] };

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
) {
  expect(response.statusCode, response.body).toBe(status);
  expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(response.body) as Problem;
  expect(body).toMatchObject({ status });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body;
}

const paths = (body: Problem) => (body.errors ?? []).map((e) => e.path);

describe('variables are a bounded map of string to string', () => {
  const patch = (variables: unknown) =>
    h.app.inject({
      method: 'PATCH',
      url: `/api/services/${service.id}`,
      headers: { authorization: admin },
      payload: { variables },
    });

  it.each([
    ['a nested object under a bad name', { 'bad key': { nested: 'x' } }, '/body/variables/bad key'],
    ['a number under a bad name', { 'A-B': 42 }, '/body/variables/A-B'],
    ['a nested object', { A: { nested: 'x' } }, '/body/variables/A'],
    ['a number', { A: 42 }, '/body/variables/A'],
    ['a boolean', { A: true }, '/body/variables/A'],
    ['an array', { A: ['x'] }, '/body/variables/A'],
    ['a name starting with a digit', { '1A': 'x' }, '/body/variables/1A'],
    ['a 129-character name', { ['A'.repeat(129)]: 'x' }, `/body/variables/${'A'.repeat(129)}`],
    ['an empty name', { '': 'x' }, '/body/variables/'],
    ['a NUL in a value', { A: 'x\u0000y' }, '/body/variables/A'],
    ['a NUL in a name', { 'A\u0000': 'x' }, '/body/variables/A\\u0000'],
    ['a 900,000-character value', { A: 'x'.repeat(900_000) }, '/body/variables/A'],
    ['a value over 32 KiB of UTF-8 in fewer characters', { A: 'é'.repeat(20_000) }, '/body/variables/A'],
  ])('refuses %s with 400 naming it', async (_name, variables, path) => {
    const body = expectProblem(await patch(variables), 400);
    expect(body.code).toBe('validation_failed');
    expect(paths(body).join(' ')).toContain(path.replace(/\/$/, ''));
  });

  it('refuses more than the entry limit and more than the total bytes', async () => {
    const many = Object.fromEntries(
      Array.from({ length: LIMITS.variablesMax + 1 }, (_, i) => [`V${i}`, 'x']),
    );
    expectProblem(await patch(many), 400);
    const big = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`V${i}`, 'x'.repeat(30_000)]));
    const body = expectProblem(await patch(big), 400);
    expect(paths(body)).toContain('/body/variables');
  });

  it('accepts good variables and shows them back as strings', async () => {
    const response = await patch({ GOOD_NAME: 'value', _UNDER: 'é'.repeat(100) });
    expect(response.statusCode, response.body).toBe(200);
    const shown = json<{ variables: Record<string, unknown> }>(
      await h.app.inject({
        method: 'GET',
        url: `/api/services/${service.id}`,
        headers: { authorization: admin },
      }),
    );
    expect(shown.variables.GOOD_NAME).toBe('value');
    expect(Object.values(shown.variables).every((v) => typeof v === 'string')).toBe(true);
  });

  it('refuses the same bounds on create', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin },
      payload: {
        name: 'var-bounds',
        deploy_method: 'compose',
        compose: 'services: {}',
        variables: { 'x y': {} },
      },
    });
    expectProblem(response, 400);
  });
});

describe('NUL bytes, ids, dates and integers are 400s naming the field', () => {
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { authorization: admin } });

  it.each([
    ['/api/services/abc%00', '/params/id'],
    [`/api/services/${'a'.repeat(65)}`, '/params/id'],
    ['/api/services/a%2Fb', '/params/id'],
    ['/api/services/%E2%9C%93', '/params/id'],
    ['/api/services?search=x%00', '/querystring/search'],
    ['/api/services?customer_id=%00', '/querystring/customer_id'],
    ['/api/deployments/x%00', '/params/id'],
  ])('%s → 400 at %s', async (url, path) => {
    const body = expectProblem(await get(url), 400);
    expect(paths(body)).toContain(path);
  });

  it.each(['%5C', '%25', '_', "'", '%F0%9F%92%A9'])(
    'search=%s is an ordinary substring (200)',
    async (value) => {
      expect((await get(`/api/services?search=${value}`)).statusCode).toBe(200);
    },
  );

  it('a NUL in a name is a 400', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/customers',
      headers: { authorization: admin },
      payload: { name: 'a\u0000b' },
    });
    expect(paths(expectProblem(response, 400))).toContain('/body/name');
  });

  it.each([
    '0000-01-01T00:00:00Z',
    '275760-09-13T00:00:01Z',
    '+275760-09-13T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-01-01',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01 00:00:00Z',
  ])('since=%s → 400', async (since) => {
    const body = expectProblem(
      await get(`/api/services/${service.id}/logs?since=${encodeURIComponent(since)}`),
      400,
    );
    expect(paths(body)).toContain('/querystring/since');
  });

  it.each([
    '1970-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '1900-06-01T12:00:00+02:00',
    '2016-12-31T23:59:60Z',
  ])('since=%s is accepted', async (since) => {
    expect(
      (await get(`/api/services/${service.id}/logs?since=${encodeURIComponent(since)}`)).statusCode,
    ).toBe(200);
  });

  it.each([
    '99999999999999999999',
    '2147483648',
    '9007199254740993',
    '-1',
    '1.5',
    '1e400',
    '1e3',
    'Infinity',
    '0x10',
    '+5',
    '%205',
  ])('after_seq=%s → 400', async (value) => {
    const body = expectProblem(
      await get(`/api/deployments/${service.deploy_job_id}?after_seq=${value}`),
      400,
    );
    expect(paths(body)).toContain('/querystring/after_seq');
  });

  it.each(['per_page=1e400', 'page=99999999999999999999', 'page=-1', 'page=1.5'])(
    'list %s → 400',
    async (query) => {
      expectProblem(await get(`/api/services?${query}`), 400);
    },
  );
});

describe('content types and bodies', () => {
  const post = (headers: Record<string, string>, payload: string | Buffer) =>
    h.app.inject({
      method: 'POST',
      url: '/api/customers',
      headers: { authorization: admin, ...headers },
      payload,
    });

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/merge-patch+json',
    'application/xml',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
  ])('%s → 415', async (type) => {
    expect(expectProblem(await post({ 'content-type': type }, '{"name":"x"}'), 415).code).toBe(
      'unsupported_media_type',
    );
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"'])(
    '%s is accepted',
    async (type) => {
      const response = await post(
        { 'content-type': type },
        JSON.stringify({ name: `ct-${Math.random().toString(36).slice(2, 10)}` }),
      );
      expect(response.statusCode, response.body).toBe(201);
    },
  );

  it.each([
    [
      'invalid UTF-8',
      Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
    ],
    ['truncated JSON', '{"name":'],
    ['a deep array', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['null', 'null'],
    ['an array', '[]'],
    ['empty', ''],
  ])('%s → 400 problem', async (_name, payload) => {
    expectProblem(await post({ 'content-type': 'application/json' }, payload), 400);
  });

  it('a body over 1 MiB → 413', async () => {
    expectProblem(
      await post({ 'content-type': 'application/json' }, `{"name":"${'x'.repeat(1_100_000)}"}`),
      413,
    );
  });
});

/** Sends raw bytes and returns everything the server wrote before closing. */
function raw(request: string): Promise<string> {
  const [hostname, port] = host.split(':');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 5000);
  });
}

function responsesIn(text: string): { status: number; type: string; body: string }[] {
  return text
    .split(/(?=HTTP\/1\.1 \d{3})/)
    .filter(Boolean)
    .map((part) => {
      const [head = '', body = ''] = part.split('\r\n\r\n');
      return {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        type: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? '',
        body,
      };
    });
}

describe('HTTP-level edges over a real socket', () => {
  const auth = () => `Authorization: ${admin}\r\n`;

  it.each([
    ['a Content-Length shorter than the body', 5],
    ['a Content-Length of one byte', 1],
  ])('%s: every answer is a 4xx problem', async (_name, length) => {
    const body = '{"name":"short-length"}';
    const text = await raw(
      `POST /api/customers HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`,
    );
    const responses = responsesIn(text);
    expect(responses.length).toBeGreaterThan(0);
    for (const response of responses) {
      expect(response.status, text).toBeGreaterThanOrEqual(400);
      expect(response.status, text).toBeLessThan(500);
      expect(response.type, text).toMatch(/^application\/problem\+json/);
    }
  });

  it.each([
    ['a malformed Content-Length', 'Content-Length: abc\r\n'],
    ['two different Content-Lengths', 'Content-Length: 2\r\nContent-Length: 3\r\n'],
    ['oversized headers', `X-Pad: ${'x'.repeat(20_000)}\r\n`],
    ['a header without a colon', 'Broken header line\r\n'],
  ])('%s → a 4xx problem', async (_name, headers) => {
    const text = await raw(`POST /api/customers HTTP/1.1\r\nHost: x\r\n${auth()}${headers}\r\n{}`);
    const [response] = responsesIn(text);
    expect(response?.status, text).toBeGreaterThanOrEqual(400);
    expect(response?.status, text).toBeLessThan(500);
    expect(response?.type, text).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response!.body)).toMatchObject({ status: response!.status });
  });
});
