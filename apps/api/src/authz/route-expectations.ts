import type { Role } from '@hostctl/domain';
import type { Caller, Fixtures } from './authz-fixtures.js';

/** The shapes and shorthands of the route table (route-table.ts and its per-feature parts). */
export type Statuses = readonly [unscoped: number, own: number, other: number];
export type Expected = Record<Role, Statuses> & { anonymous?: number };
/** A WebSocket upgrade of a streaming route (route-table.ts SOCKET_TABLE). */
export interface SocketCase {
  url: (f: Fixtures) => string | Promise<string>;
  expect: Expected;
}

export interface Request {
  url: string;
  payload?: object;
  /** Send a fresh browser session instead of the caller's API key (session-only routes). */
  session?: boolean;
}

export interface RouteCase {
  label: string;
  /** Builds the request for one caller; routes that change their target get a fresh one per caller. */
  request: (f: Fixtures, caller: Caller | null) => Promise<Request> | Request;
  expect: Expected;
}

export interface RouteEntry {
  public?: boolean;
  cases: readonly RouteCase[];
}

export const all = (status: number): Expected => ({
  admin: [status, status, status],
  operator: [status, status, status],
  viewer: [status, status, status],
});
export const publicAll = (status: number): Expected => ({ ...all(status), anonymous: status });

/** Reading a resource of A: scoped callers of A and unscoped admins/operators; an unscoped viewer sees nothing. */
export const readA = (ok: number): Expected => ({
  admin: [ok, ok, 404],
  operator: [ok, ok, 404],
  viewer: [404, ok, 404],
});
/** Changing a resource of A: the role is checked first (viewer 403), then the scope (404). */
export const writeA = (ok: number): Expected => ({
  admin: [ok, ok, 404],
  operator: [ok, ok, 404],
  viewer: [403, 403, 403],
});
/** Platform-wide resources (nodes): unscoped admins and operators; any customer scope is 403. */
export const platformOnly = (ok: number): Expected => ({
  admin: [ok, 403, 403],
  operator: [ok, 403, 403],
  viewer: [403, 403, 403],
});
export const adminsOnly = (admin: Statuses): Expected => ({
  admin,
  operator: [403, 403, 403],
  viewer: [403, 403, 403],
});

export const one = (label: string, expect: Expected, request: RouteCase['request']): RouteEntry => ({
  cases: [{ label, request, expect }],
});
export const fixed = (url: string) => () => ({ url });
