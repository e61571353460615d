import { randomUUID } from 'node:crypto';
import { generateApiKey, type KeyAction } from '@hostctl/auth-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * Variable groups through the API (docs/secrets.md#variable-groups): what a tenant does with them
 * (create, attach, change, redeploy, delete) and what an attacker tries (another customer's
 * group, a stale write, a key limited to one service, a secret read back).
 */
let h: Harness;
let admin: { id: string; auth: string };
let customerA: string;
let customerB: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  [customerA, customerB] = await Promise.all([
    h.customer().then((c) => c.id),
    h.customer().then((c) => c.id),
  ]);
});
afterAll(async () => h?.close());

type Group = {
  id: string;
  name: string;
  version: number;
  variables: Record<string, string>;
  secret_variables: Record<string, { set: true }>;
  affected_services?: { id: string; name: string }[];
};

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers = {}) =>
  h.app.inject({
    method,
    url,
    headers: { authorization: admin.auth, ...headers },
    ...(payload ? { payload } : {}),
  });

async function createGroup(body: Record<string, unknown> = {}, customerId = customerA): Promise<Group> {
  const response = await call('POST', '/api/variable-groups', {
    name: uniqueName('group'),
    customer_id: customerId,
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return json<Group>(response);
}

describe('a group of variables', () => {
  it('is created, read with an ETag, listed without values, and shows secrets by name only', async () => {
    const secret = `planted-group-${randomUUID()}`;
    const group = await createGroup({
      variables: { SMTP_HOST: 'mail' },
      secret_variables: { SMTP_PASSWORD: secret },
    });
    expect(group.version).toBe(1);
    const detail = await call('GET', `/api/variable-groups/${group.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.headers.etag).toBe('"1"');
    expect(json<Group>(detail).variables).toEqual({ SMTP_HOST: 'mail' });
    expect(Object.keys(json<Group>(detail).secret_variables)).toEqual(['SMTP_PASSWORD']);
    expect(detail.body).not.toContain(secret);
    const list = await call('GET', `/api/variable-groups?customer_id=${customerA}&per_page=100`);
    expect(json<{ data: { id: string }[] }>(list).data.map((g) => g.id)).toContain(group.id);
    expect(list.body).not.toContain('mail');
  });

  it("is another customer's business: 404 to a caller scoped to another customer", async () => {
    const group = await createGroup();
    const outsider = await h.user('admin', customerB);
    for (const [method, url] of [
      ['GET', `/api/variable-groups/${group.id}`],
      ['PATCH', `/api/variable-groups/${group.id}`],
      ['DELETE', `/api/variable-groups/${group.id}`],
    ] as const) {
      const response = await h.app.inject({
        method,
        url,
        headers: { authorization: outsider.auth },
        ...(method === 'PATCH' ? { payload: { variables: { X: 'y' } } } : {}),
      });
      expect({ method, status: response.statusCode }).toEqual({ method, status: 404 });
    }
    const list = await h.app.inject({
      method: 'GET',
      url: '/api/variable-groups',
      headers: { authorization: outsider.auth },
    });
    expect(json<{ data: { id: string }[] }>(list).data.map((g) => g.id)).not.toContain(group.id);
  });

  it('refuses a taken name (409) and a bad variable name (400 naming the field)', async () => {
    const group = await createGroup();
    const taken = await call('POST', '/api/variable-groups', { name: group.name, customer_id: customerA });
    expect(taken.statusCode).toBe(409);
    const bad = await call('POST', '/api/variable-groups', {
      name: uniqueName('group'),
      customer_id: customerA,
      variables: { 'bad key': 'x' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('/body/variables');
  });
});

describe('concurrent edits never lose a write', () => {
  it('PATCH with a stale If-Match is 412 (problem+json); with the current one it lands and bumps the ETag', async () => {
    const group = await createGroup({ variables: { A: '1' } });
    const first = await call(
      'PATCH',
      `/api/variable-groups/${group.id}`,
      { variables: { A: '2' } },
      { 'if-match': '"1"' },
    );
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers.etag).toBe('"2"');
    const stale = await call(
      'PATCH',
      `/api/variable-groups/${group.id}`,
      { variables: { A: '3' } },
      { 'if-match': '"1"' },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.headers['content-type']).toContain('application/problem+json');
    const after = json<Group>(await call('GET', `/api/variable-groups/${group.id}`));
    expect(after.variables).toEqual({ A: '2' });
    expect(after.version).toBe(2);
  });

  it('two concurrent PATCHes of different names without If-Match both land', async () => {
    const group = await createGroup({ variables: { BASE: 'x' } });
    const names = Array.from({ length: 6 }, (_, i) => `V${i}`);
    const answers = await Promise.all(
      names.map((name) => call('PATCH', `/api/variable-groups/${group.id}`, { variables: { [name]: name } })),
    );
    const statuses = answers.map((a) => a.statusCode);
    const after = json<Group>(await call('GET', `/api/variable-groups/${group.id}`));
    // Every 200 is in the group; a 412 (merge retries exhausted) says so rather than dropping it.
    for (const [index, name] of names.entries())
      if (statuses[index] === 200) expect(after.variables[name]).toBe(name);
    expect(statuses.every((s) => s === 200 || s === 412)).toBe(true);
    expect(after.version).toBe(1 + statuses.filter((s) => s === 200).length);
  });
});

describe('attached to services', () => {
  it('shows in the detail in order; unknown, foreign and duplicate groups are 400 naming the field', async () => {
    const [one, two] = [await createGroup(), await createGroup()];
    const foreign = await createGroup({}, customerB);
    const created = (await h.createService(admin.auth, {
      customer_id: customerA,
      variable_groups: [two.id, one.id],
    })) as { id: string };
    const detail = json<{ variable_groups: string[] }>(await call('GET', `/api/services/${created.id}`));
    expect(detail.variable_groups).toEqual([two.id, one.id]);
    for (const groups of [[foreign.id], [randomUUID()]]) {
      const refused = await call('PATCH', `/api/services/${created.id}`, { variable_groups: groups });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('/body/variable_groups/0');
    }
    const duplicate = await call('PATCH', `/api/services/${created.id}`, {
      variable_groups: [one.id, one.id],
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toContain('variable_groups');
    const tooMany = await call('PATCH', `/api/services/${created.id}`, {
      variable_groups: Array.from({ length: 11 }, () => randomUUID()),
    });
    expect(tooMany.statusCode).toBe(400);
  });

  it('a change lists the affected services, and redeploy queues one deployment each, idempotently', async () => {
    const group = await createGroup({ variables: { A: '1' } });
    const services: { id: string; name: string }[] = [];
    for (let i = 0; i < 2; i += 1)
      services.push(
        await h.createService(admin.auth, { customer_id: customerA, variable_groups: [group.id] }),
      );
    const changed = json<Group>(
      await call('PATCH', `/api/variable-groups/${group.id}`, { variables: { A: '2' } }),
    );
    expect(changed.affected_services?.map((s) => s.id).sort()).toEqual(services.map((s) => s.id).sort());
    const listed = json<{ data: { id: string }[] }>(
      await call('GET', `/api/variable-groups/${group.id}/services`),
    );
    expect(listed.data.map((s) => s.id).sort()).toEqual(services.map((s) => s.id).sort());

    const key = randomUUID();
    const first = await call('POST', `/api/variable-groups/${group.id}/redeploy`, undefined, {
      'idempotency-key': key,
    });
    expect(first.statusCode, first.body).toBe(200);
    const queued = json<{ data: { service_id: string; deploy_job_id: string }[] }>(first).data;
    expect(queued.map((d) => d.service_id).sort()).toEqual(services.map((s) => s.id).sort());
    const replay = await call('POST', `/api/variable-groups/${group.id}/redeploy`, undefined, {
      'idempotency-key': key,
    });
    expect(json<{ data: unknown[] }>(replay).data).toEqual(queued);
    const deployments = await h.container.db.deployment.count({
      where: { id: { in: queued.map((d) => d.deploy_job_id) } },
    });
    expect(deployments).toBe(2);
  });

  it('deleting an attached group is 409 naming the services; detached, it goes', async () => {
    const group = await createGroup();
    const service = (await h.createService(admin.auth, {
      customer_id: customerA,
      variable_groups: [group.id],
    })) as {
      id: string;
      name: string;
    };
    const refused = await call('DELETE', `/api/variable-groups/${group.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain(service.name);
    expect((await call('PATCH', `/api/services/${service.id}`, { variable_groups: [] })).statusCode).toBe(
      200,
    );
    expect((await call('DELETE', `/api/variable-groups/${group.id}`)).statusCode).toBe(204);
  });
});

describe('secrets and keys', () => {
  async function limitedKey(limits: { serviceId?: string; customerId: string; actions: KeyAction[] }) {
    const { key, digest } = generateApiKey();
    await h.container.db.apiKey.create({
      data: {
        userId: admin.id,
        name: 'limited',
        digest,
        serviceId: limits.serviceId ?? null,
        customerId: limits.customerId,
        actions: limits.actions,
      },
    });
    return `Bearer ${key}`;
  }

  it('a secret is revealed only by the audited reveal, never stored in the audit', async () => {
    const secret = `planted-reveal-${randomUUID()}`;
    const group = await createGroup({ secret_variables: { TOKEN: secret } });
    const response = await call('POST', `/api/variable-groups/${group.id}/secret-variables/reveal`, {
      name: 'TOKEN',
    });
    expect(response.statusCode).toBe(200);
    expect(json<{ value: string }>(response).value).toBe(secret);
    expect(response.headers['cache-control']).toBe('no-store');
    await h.container.audit.flush();
    const event = await h.container.db.auditEvent.findFirstOrThrow({
      where: { requestId: String(response.headers['x-request-id']) },
    });
    expect(event.action).toBe('variable_groups.secret_variables.reveal');
    expect(event.subject).toBe('TOKEN');
    expect(JSON.stringify(event)).not.toContain(secret);
  });

  it('a key limited to one service of the customer cannot read or change its groups', async () => {
    const group = await createGroup({ variables: { A: '1' } });
    const service = (await h.createService(admin.auth, {
      customer_id: customerA,
      variable_groups: [group.id],
    })) as {
      id: string;
    };
    const auth = await limitedKey({
      serviceId: service.id,
      customerId: customerA,
      actions: ['read', 'deploy', 'manage'],
    });
    for (const [method, url] of [
      ['GET', '/api/variable-groups'],
      ['GET', `/api/variable-groups/${group.id}`],
      ['PATCH', `/api/variable-groups/${group.id}`],
      ['POST', `/api/variable-groups/${group.id}/redeploy`],
    ] as const) {
      const response = await h.app.inject({
        method,
        url,
        headers: { authorization: auth },
        ...(method === 'PATCH' ? { payload: { variables: { A: 'x' } } } : {}),
      });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 403 });
      expect(json<{ detail: string }>(response).detail).toContain(`limited to service ${service.id}`);
    }
  });

  it("a customer key reads its customer's groups; changing one needs manage", async () => {
    const group = await createGroup({ variables: { A: '1' } });
    const reader = await limitedKey({ customerId: customerA, actions: ['read', 'deploy'] });
    const read = await h.app.inject({
      method: 'GET',
      url: `/api/variable-groups/${group.id}`,
      headers: { authorization: reader },
    });
    expect(read.statusCode).toBe(200);
    const write = await h.app.inject({
      method: 'PATCH',
      url: `/api/variable-groups/${group.id}`,
      headers: { authorization: reader },
      payload: { variables: { A: '2' } },
    });
    expect(write.statusCode).toBe(403);
    expect(json<{ detail: string }>(write).detail).toContain('needs manage');
  });
});
