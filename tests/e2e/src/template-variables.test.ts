import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { startStack, type Stack } from './stack.js';
import { fetchFrom, nothingLeftOf, unitsOf } from './workloads.js';

// A template deploy serves its variables, and a PATCH of a variable is live after the redeploy: in
// the environment of the service's container (a Swarm task under E2E_RUNTIME=swarm) and on its page.
let stack: Stack;
let api: ReturnType<typeof apiClient>;
let customerId: string;

beforeAll(async () => {
  stack = await startStack();
  customerId = (await stack.cli('customers', 'create', '--name', `tpl-${Date.now()}`)).id as string;
  const email = `tpl-${Date.now()}@e2e.test`;
  await stack.cli('users', 'create', '--email', email, '--name', 'T', '--role', 'operator');
  api = apiClient(
    stack.apiUrl,
    (await stack.cli('api-keys', 'create', '--email', email, '--name', 'k')).key as string,
  );
});
afterAll(async () => stack?.stop());

/** The one unit serving the service: its MESSAGE variable and its page. */
async function served(serviceId: string): Promise<{ env: string[]; page: string }> {
  const units = await unitsOf(serviceId);
  expect(units).toHaveLength(1);
  return { env: units[0]!.env, page: await fetchFrom(units[0]) };
}

it('deploys static-site with its message, and a changed message after PATCH', async () => {
  const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `site-${Date.now().toString(36)}`,
    customer_id: customerId,
    deploy_method: 'template',
    template_id: 'static-site',
    variables: { MESSAGE: 'first message' },
  });
  expect(created.status).toBe(201);
  expect((await api.get(`/api/deployments/${created.body.deploy_job_id}?wait=90`)).body.status).toBe(
    'succeeded',
  );
  const first = await served(created.body.id);
  expect(first.env).toContain('MESSAGE=first message');
  expect(first.page).toContain('first message');

  const patched = await api.request('PATCH', `/api/services/${created.body.id}`, {
    variables: { MESSAGE: 'second message' },
  });
  expect(patched.status).toBe(200);
  const redeploy = await api.get(`/api/deployments/${patched.body.deploy_job_id as string}?wait=90`);
  expect(redeploy.body.status).toBe('succeeded');
  const second = await served(created.body.id);
  expect(second.env).toContain('MESSAGE=second message');
  expect(second.page).toContain('second message');
  expect((await api.delete(`/api/services/${created.body.id}`)).status).toBe(204);
  // Wait for the purge, so stopping the stack does not strand the containers, route or records.
  await nothingLeftOf(created.body.id);
});
