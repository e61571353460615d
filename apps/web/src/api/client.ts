import createClient from 'openapi-fetch';
import { ProblemError } from './problem.ts';
import type { paths } from './schema';

/**
 * The typed API client. Same origin: the session cookie goes along, and browsers add the Origin
 * header the API checks on cookie-authenticated writes.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });

/** Resolves to the response body, or throws the API's problem (or a ProblemError for a network failure). */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw ProblemError.from(response.status, error);
  return data as T;
}

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Me = Json<'/api/auth/me', 'get'>;
export type ServiceList = Json<'/api/services', 'get'>;
export type ServiceSummary = ServiceList['data'][number];
export type Service = Json<'/api/services/{id}', 'get'>;
export type ServiceStatus = Service['status'];
export type DeploymentList = Json<'/api/services/{id}/deployments', 'get'>;
export type Deployment = DeploymentList['data'][number];
export type ServiceEvent = Json<'/api/services/{id}/events', 'get'>['data'][number];
export type LogEntry = Json<'/api/services/{id}/logs', 'get'>['logs'][number];
export type ApiKey = Json<'/api/auth/api-keys', 'get'>['data'][number];
export type Customer = Json<'/api/customers', 'get'>['data'][number];
export type User = Json<'/api/users', 'get'>['data'][number];
export type Template = Json<'/api/templates', 'get'>['data'][number];
