import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * The group list's names and counts, renaming, and attach/detach with If-Match
 * (docs/secrets.md#variable-groups), against the real database: what the dashboard and the CLI do
 * and what two people or pipelines racing on one service or one group do.
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

type ListItem = {
  id: string;
  name: string;
  version: number;
  updated_at: string;
  variable_names: string[];
  secret_variable_names: string[];
  service_count: number;
};
type Attachment = { service_id: string; variable_groups: string[]; deploy_job_id: string | null };

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers = {}) =>
  h.app.inject({
    method,
    url,
    headers: { authorization: admin.auth, ...headers },
    ...(payload ? { payload } : {}),
  });

async function createGroup(body: Record<string, unknown> = {}, customerId = customerA) {
  const response = await call('POST', '/api/variable-groups', {
    name: uniqueName('group'),
    customer_id: customerId,
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return json<ListItem>(response);
}

async function listed(groupId: string, customerId = customerA): Promise<ListItem | undefined> {
  const response = await call('GET', `/api/variable-groups?customer_id=${customerId}&per_page=100`);
  expect(response.statusCode).toBe(200);
  return json<{ data: ListItem[] }>(response).data.find((group) => group.id === groupId);
}

const newService = (groups: string[] = [], customerId = customerA) =>
  h.createService(admin.auth, { customer_id: customerId, variable_groups: groups }) as Promise<{
    id: string;
  }>;

const attachedTo = async (serviceId: string) =>
  json<{ variable_groups: string[] }>(await call('GET', `/api/services/${serviceId}`)).variable_groups;

describe('the group list', () => {
  it('names every variable (secret ones marked) and counts live services, never a value', async () => {
    const [plain, secret] = [`plain-${randomUUID()}`, `planted-${randomUUID()}`];
    const group = await createGroup({
      variables: { SMTP_HOST: plain },
      secret_variables: { SMTP_PASSWORD: secret },
    });
    expect(group).toMatchObject({
      variable_names: ['SMTP_HOST', 'SMTP_PASSWORD'],
      secret_variable_names: ['SMTP_PASSWORD'],
      service_count: 0,
    });
    await newService([group.id]);
    const deleted = await newService([group.id]);
    await h.container.db.service.update({ where: { id: deleted.id }, data: { deletedAt: new Date() } });
    await call('PATCH', `/api/variable-groups/${group.id}`, {
      variables: { SMTP_HOST: null, SMTP_PORT: '587' },
    });
    const row = await listed(group.id);
    expect(row).toMatchObject({
      variable_names: ['SMTP_PASSWORD', 'SMTP_PORT'],
      secret_variable_names: ['SMTP_PASSWORD'],
      service_count: 1,
    });
    const body = (await call('GET', `/api/variable-groups?customer_id=${customerA}&per_page=100`)).body;
    for (const value of [plain, secret, '587']) expect(body).not.toContain(value);
  });

  it('fills the names of a row written before they were kept, once, without touching its version', async () => {
    const group = await createGroup({ variables: { LEGACY_A: 'a1', LEGACY_B: 'b1' } });
    await h.container.db.$executeRaw`UPDATE variable_groups SET variable_names = NULL WHERE id = ${group.id}`;
    const row = await listed(group.id);
    expect(row).toMatchObject({
      variable_names: ['LEGACY_A', 'LEGACY_B'],
      version: 1,
      updated_at: group.updated_at,
    });
    const [stored] = await h.container.db.$queryRaw<{ variable_names: unknown }[]>`
      SELECT variable_names FROM variable_groups WHERE id = ${group.id}`;
    expect(stored?.variable_names).toEqual(['LEGACY_A', 'LEGACY_B']);
  });
});

describe('renaming a group', () => {
  it('renames with the current If-Match; a taken name is 409, a stale version 412', async () => {
    const [group, other] = [await createGroup(), await createGroup()];
    const renamed = uniqueName('renamed');
    const ok = await call(
      'PATCH',
      `/api/variable-groups/${group.id}`,
      { name: renamed },
      { 'if-match': '"1"' },
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect((await listed(group.id))?.name).toBe(renamed);
    const taken = await call(
      'PATCH',
      `/api/variable-groups/${group.id}`,
      { name: other.name },
      { 'if-match': '"2"' },
    );
    expect(taken.statusCode).toBe(409);
    expect(json<{ detail: string }>(taken).detail).toContain(other.name);
    const stale = await call(
      'PATCH',
      `/api/variable-groups/${group.id}`,
      { name: uniqueName('x') },
      { 'if-match': '"1"' },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.headers['content-type']).toContain('application/problem+json');
    expect((await listed(group.id))?.name).toBe(renamed);
  });
});

describe('attach and detach', () => {
  const attach = (groupId: string, body: object, ifMatch?: string) =>
    call('POST', `/api/variable-groups/${groupId}/attach`, body, ifMatch ? { 'if-match': ifMatch } : {});
  const detach = (groupId: string, body: object, ifMatch?: string) =>
    call('POST', `/api/variable-groups/${groupId}/detach`, body, ifMatch ? { 'if-match': ifMatch } : {});

  it('attaches last or at a position (moving an attached group), detaches, and redeploys only on a change', async () => {
    const [one, two, three] = [await createGroup(), await createGroup(), await createGroup()];
    const service = await newService([one.id]);
    const first = await attach(two.id, { service_id: service.id }, '"1"');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers.etag).toBe('"1"');
    const attached = json<Attachment>(first);
    expect(attached.variable_groups).toEqual([one.id, two.id]);
    expect(await h.container.db.deployment.count({ where: { id: attached.deploy_job_id ?? '' } })).toBe(1);
    await attach(three.id, { service_id: service.id, position: 1 });
    expect(await attachedTo(service.id)).toEqual([three.id, one.id, two.id]);
    const moved = json<Attachment>(await attach(two.id, { service_id: service.id, position: 2 }));
    expect(moved.variable_groups).toEqual([three.id, two.id, one.id]);
    const again = json<Attachment>(await attach(two.id, { service_id: service.id, position: 2 }));
    expect(again).toEqual({
      service_id: service.id,
      variable_groups: moved.variable_groups,
      deploy_job_id: null,
    });
    const detached = json<Attachment>(await detach(three.id, { service_id: service.id }));
    expect(detached.variable_groups).toEqual([two.id, one.id]);
    expect(json<Attachment>(await detach(three.id, { service_id: service.id })).deploy_job_id).toBeNull();
    expect((await listed(two.id))?.service_count).toBe(1);
  });

  it('a stale If-Match (the group changed since it was read) is 412 and changes nothing', async () => {
    const group = await createGroup({ variables: { A: '1' } });
    const service = await newService();
    await call('PATCH', `/api/variable-groups/${group.id}`, { variables: { A: '2' } });
    const stale = await attach(group.id, { service_id: service.id }, '"1"');
    expect(stale.statusCode).toBe(412);
    expect(json<{ detail: string }>(stale).detail).toContain('"2"');
    expect(await attachedTo(service.id)).toEqual([]);
    expect((await attach(group.id, { service_id: service.id }, '"2"')).statusCode).toBe(200);
    await call('PATCH', `/api/variable-groups/${group.id}`, { variables: { A: '3' } });
    expect((await detach(group.id, { service_id: service.id }, '"2"')).statusCode).toBe(412);
    expect(await attachedTo(service.id)).toEqual([group.id]);
  });

  it('concurrent attaches to one service never lose one: every 200 is in the list', async () => {
    const groups = await Promise.all(Array.from({ length: 4 }, () => createGroup()));
    const service = await newService();
    const answers = await Promise.all(groups.map((group) => attach(group.id, { service_id: service.id })));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(
      statuses.every((s) => s === 200 || s === 412),
      String(statuses),
    ).toBe(true);
    const landed = groups.filter((_, index) => statuses[index] === 200).map((group) => group.id);
    expect(landed.length).toBeGreaterThan(0);
    expect([...(await attachedTo(service.id))].sort()).toEqual([...landed].sort());
  });

  it("another customer's service is 400 naming service_id; an unknown one and a foreign caller 404", async () => {
    const group = await createGroup();
    const foreign = await newService([], customerB);
    const refused = await attach(group.id, { service_id: foreign.id });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('/body/service_id');
    expect((await attach(group.id, { service_id: randomUUID() })).statusCode).toBe(404);
    const outsider = await h.user('admin', customerB);
    const hidden = await h.app.inject({
      method: 'POST',
      url: `/api/variable-groups/${group.id}/attach`,
      headers: { authorization: outsider.auth },
      payload: { service_id: foreign.id },
    });
    expect(hidden.statusCode).toBe(404);
    expect(await attachedTo(foreign.id)).toEqual([]);
  });
});
