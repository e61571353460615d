import { inject } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { TEST_IMAGE } from './env.js';

/** Arranging through the API as the seeded admin (what a test sets up is not what it proves). */
export async function adminCall<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const { appUrl, adminKey } = inject('web');
  return apiClient(appUrl, adminKey).request<T>(method, path, body);
}

/** A compose service that serves HTTP and writes a numbered line to its log every 200 ms. */
export const CHATTY_COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "httpd -p 8080 -h /www; i=0; while true; do echo tick $$i; i=$$((i+1)); sleep 0.2; done"]
    ports: ["8080"]
`;

export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 5)}`;

/** Creates a compose service for `customer` and waits until its first deployment has finished. */
export async function deployedService(
  customer: string,
  prefix: string,
): Promise<{ id: string; name: string }> {
  const name = uniqueName(prefix);
  const created = await adminCall<{ id: string; deploy_job_id: string }>('POST', '/api/services', {
    name,
    customer_id: inject('web').customers[customer],
    deploy_method: 'compose',
    compose: CHATTY_COMPOSE,
  });
  if (created.status !== 201)
    throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const done = await adminCall<{ status: string }>(
    'GET',
    `/api/deployments/${created.body.deploy_job_id}?wait=90`,
  );
  if (done.body.status !== 'succeeded') throw new Error(`deploy of ${name} ended ${done.body.status}`);
  return { id: created.body.id, name };
}
