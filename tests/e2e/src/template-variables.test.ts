import Docker from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SERVICE_LABEL } from '@hostctl/domain';
import { apiClient } from '@hostctl/testing';
import { eventually } from './client.js';
import { startStack, type Stack } from './stack.js';

// A template deploy serves its variables, and a PATCH of a variable is live after the redeploy.
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
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

async function page(serviceId: string): Promise<string> {
  const [info] = await docker.listContainers({ filters: { label: [`${SERVICE_LABEL}=${serviceId}`] } });
  const ip = Object.values(info?.NetworkSettings.Networks ?? {})[0]?.IPAddress;
  return (await fetch(`http://${ip}:8080/`)).text();
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
  expect(await page(created.body.id)).toContain('first message');

  const patched = await api.request('PATCH', `/api/services/${created.body.id}`, {
    variables: { MESSAGE: 'second message' },
  });
  expect(patched.status).toBe(200);
  const redeploy = await api.get(`/api/deployments/${patched.body.deploy_job_id as string}?wait=90`);
  expect(redeploy.body.status).toBe('succeeded');
  expect(await page(created.body.id)).toContain('second message');
  expect((await api.delete(`/api/services/${created.body.id}`)).status).toBe(204);
  // Wait for the purge, so stopping the stack does not strand the containers, route or records.
  await eventually(
    () => docker.listContainers({ all: true, filters: { label: [`${SERVICE_LABEL}=${created.body.id}`] } }),
    (left) => left.length === 0,
  );
});
