import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { PUBLIC } from '@hostctl/auth-policy';
import type { Role } from '@hostctl/domain';
import { createHarness, type Harness } from '../test-support/harness.js';
import { openSocket } from '../test-support/ws-client.js';
import { buildFixtures, ROLES_UNDER_TEST, SCOPES, type Caller, type Fixtures } from './authz-fixtures.js';
import { ROUTE_TABLE, SOCKET_TABLE, type Expected, type RouteCase } from './route-table.js';

/**
 * Every registered route × role (admin, operator, viewer) × scope (unscoped, own customer, other
 * customer), plus no credentials, each against its exact expected status from route-table.ts.
 * Runs on the real app, database and Redis; no worker consumes this harness's queue, so deploy
 * jobs just wait there and lifecycle requests answer after LIFECYCLE_WAIT_MS.
 */
let h: Harness;
let f: Fixtures;

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  f = await buildFixtures(h);
});
afterAll(async () => h?.close());

const keyOf = (route: { method: string; url: string }) => `${route.method} ${route.url}`;

describe('the route table covers exactly the registered routes', () => {
  it('every registered route has an entry (HEAD follows its GET)', () => {
    const missing = h.app.routeCatalog
      .map((route) => (route.method === 'HEAD' ? { ...route, method: 'GET' } : route))
      .filter((route) => ROUTE_TABLE[keyOf(route)] === undefined)
      .map(keyOf);
    expect(missing).toEqual([]);
  });

  it('every entry names a registered route', () => {
    const registered = new Set(h.app.routeCatalog.map(keyOf));
    expect(Object.keys(ROUTE_TABLE).filter((key) => !registered.has(key))).toEqual([]);
  });

  it('an entry is public exactly when its route declares the public permission', () => {
    const disagreeing = h.app.routeCatalog
      .filter((route) => route.method !== 'HEAD')
      .filter((route) => (route.permission === PUBLIC) !== (ROUTE_TABLE[keyOf(route)]?.public === true))
      .map(keyOf);
    expect(disagreeing).toEqual([]);
  });
});

type Matrix = Record<Role, number[]> & { anonymous: number };

/** Runs one case for every caller and without credentials; the result has the shape of Expected. */
async function run(method: string, routeCase: RouteCase): Promise<Matrix> {
  const call = async (caller: Caller | null): Promise<number> => {
    const request = await routeCase.request(f, caller);
    const headers: Record<string, string> = {};
    if (caller && request.session) Object.assign(headers, await f.session(caller));
    else if (caller) headers.authorization = caller.auth;
    const options: InjectOptions = {
      method,
      url: request.url,
      headers,
      ...(request.payload ? { payload: request.payload } : {}),
    };
    return (await h.app.inject(options)).statusCode;
  };
  const byCaller = await Promise.all(
    f.callers.map(async (caller) => ({ caller, status: await call(caller) })),
  );
  const statusOf = (role: Role, scope: (typeof SCOPES)[number]) =>
    byCaller.find((c) => c.caller.role === role && c.caller.scope === scope)?.status ?? -1;
  const matrix = Object.fromEntries(
    ROLES_UNDER_TEST.map((role) => [role, SCOPES.map((scope) => statusOf(role, scope))]),
  ) as Record<Role, number[]>;
  return { ...matrix, anonymous: await call(null) };
}

const expected = (e: Expected, isPublic: boolean): Matrix => ({
  admin: [...e.admin],
  operator: [...e.operator],
  viewer: [...e.viewer],
  anonymous: e.anonymous ?? (isPublic ? 200 : 401),
});

const cases = Object.entries(ROUTE_TABLE).flatMap(([key, entry]) =>
  entry.cases.map((routeCase) => ({ key, routeCase, isPublic: entry.public === true })),
);

describe.each(cases)('$key: $routeCase.label', ({ key, routeCase, isPublic }) => {
  it('answers each role × scope exactly as the table says', async () => {
    const method = key.split(' ')[0] ?? 'GET';
    expect(await run(method, routeCase)).toEqual(expected(routeCase.expect, isPublic));
  });
});

describe('HEAD answers as GET does', () => {
  it('for every GET route that Fastify also serves as HEAD', async () => {
    const heads = h.app.routeCatalog.filter((route) => route.method === 'HEAD');
    expect(heads.length).toBeGreaterThan(0);
    for (const head of heads) {
      const entry = ROUTE_TABLE[`GET ${head.url}`];
      const first = entry?.cases[0];
      if (!entry || !first) throw new Error(`no GET entry for HEAD ${head.url}`);
      expect({ route: head.url, ...(await run('HEAD', first)) }).toEqual({
        route: head.url,
        ...expected(first.expect, entry.public === true),
      });
    }
  });
});

/**
 * The WebSocket forms of the streaming routes: the role is checked before the handshake (refused
 * upgrade: its HTTP status), the scope by the stream itself, which closes with 4404 (reported as
 * 404) exactly as for an unknown id. An accepted stream that stays open is reported as 101.
 */
describe('WebSocket upgrades answer each role × scope as the table says', () => {
  let base: string;
  beforeAll(async () => {
    base = await h.listen();
  });

  async function socketOutcome(url: string, headers: Record<string, string>): Promise<number> {
    const ws = openSocket(`ws://${base}${url}`, headers);
    try {
      await ws.opened;
    } catch (error) {
      return Number(/refused with (\d+)/.exec(String(error))?.[1] ?? -1);
    }
    // A refusal by scope arrives right after the handshake; 1.5 s is far above that on this stack.
    const closed = await Promise.race([
      ws.closed.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 1500)),
    ]);
    if (!closed) {
      ws.socket.close();
      return 101;
    }
    return ws.closeCode === 4404 ? 404 : (ws.closeCode ?? -1);
  }

  it.each(Object.entries(SOCKET_TABLE))('%s', async (_key, socketCase) => {
    const url = await socketCase.url(f);
    const byCaller = await Promise.all(
      f.callers.map(async (caller) => ({
        caller,
        status: await socketOutcome(url, { authorization: caller.auth }),
      })),
    );
    const matrix = Object.fromEntries(
      ROLES_UNDER_TEST.map((role) => [
        role,
        SCOPES.map(
          (scope) => byCaller.find((c) => c.caller.role === role && c.caller.scope === scope)?.status,
        ),
      ]),
    );
    expect({ ...matrix, anonymous: await socketOutcome(url, {}) }).toEqual(
      expected(socketCase.expect, false),
    );
  });
});
