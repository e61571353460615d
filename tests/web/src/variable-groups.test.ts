import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * Variable groups in the dashboard (docs/secrets.md#variable-groups, docs/dashboard.md): an operator
 * creates one, edits its plain and secret variables (masked, revealed through the audited route),
 * meets the 412 of a change made meanwhile and reloads, attaches groups to a service in order and
 * deletes a group once nothing uses it; a viewer sees names only and no control.
 */
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
});
afterAll(async () => browser?.close());

interface Group {
  id: string;
  name: string;
  version: number;
  variables: Record<string, string>;
}

async function groupNamed(name: string): Promise<Group> {
  const list = await adminCall<{ data: Group[] }>('GET', '/api/variable-groups?per_page=100');
  const found = list.body.data.find((group) => group.name === name);
  if (!found) throw new Error(`no group ${name}`);
  return (await adminCall<Group>('GET', `/api/variable-groups/${found.id}`)).body;
}

const groupsOf = async (serviceId: string) =>
  (await adminCall<{ variable_groups: string[] }>('GET', `/api/services/${serviceId}`)).body.variable_groups;

describe('variable groups', () => {
  it('creates a group and edits its variables; a secret is masked and revealed on request (audited)', async () => {
    const { appUrl } = inject('web');
    const name = uniqueName('ui-group');
    const planted = `planted-group-${Date.now().toString(36)}`;

    await page.goto(`${appUrl}/variable-groups`);
    await settled(page, 'Variable groups');
    await page.getByLabel('Group name').fill(name);
    await page.getByLabel('Customer').selectOption({ label: 'acme' });
    await page.getByRole('button', { name: 'Create group' }).click();
    await settled(page, name);
    const group = await groupNamed(name);

    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name', { exact: true }).fill('APP_MODE');
    await page.getByLabel('Value', { exact: true }).fill('production');
    await page.getByRole('button', { name: 'Save variables' }).click();
    await page.getByRole('status').filter({ hasText: 'Variables saved' }).waitFor();

    await page.getByLabel('Secret name').fill('SMTP_PASSWORD');
    await page.getByLabel('Secret value').fill(planted);
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret saved' }).waitFor();
    const secret = page.getByRole('textbox', { name: 'SMTP_PASSWORD', exact: true });
    await secret.waitFor();
    // The API never sent the value: nothing in the page holds it until Reveal.
    expect(await page.content()).not.toContain(planted);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Reveal SMTP_PASSWORD' }).click();
    await expect.poll(() => secret.inputValue()).toBe(planted);
    const audit = await adminCall<{ data: { subject: string | null }[] }>(
      'GET',
      `/api/audit-events?target_id=${group.id}&action=variable_groups.secret_variables.reveal`,
    );
    expect(audit.body.data.map((event) => event.subject)).toEqual(['SMTP_PASSWORD']);
    expect(JSON.stringify(audit.body)).not.toContain(planted);
    await page.getByRole('button', { name: 'Hide SMTP_PASSWORD' }).click();
    expect(await page.content()).not.toContain(planted);

    const saved = await adminCall<Group & { secret_variables: Record<string, unknown> }>(
      'GET',
      `/api/variable-groups/${group.id}`,
    );
    expect(saved.body.variables).toEqual({ APP_MODE: 'production' });
    expect(Object.keys(saved.body.secret_variables)).toEqual(['SMTP_PASSWORD']);

    // The list names the customer, the variables (secrets marked) and the services using it, from
    // its own answer: no request per group.
    const perGroup: string[] = [];
    const record = (request: { url(): string }) => {
      if (/\/api\/variable-groups\/[^/?]+/.test(new URL(request.url()).pathname))
        perGroup.push(request.url());
    };
    page.on('request', record);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Variable groups' })
      .click();
    await settled(page, 'Variable groups');
    const row = page.getByRole('row', { name: new RegExp(name) });
    await expect
      .poll(async () => (await row.getByRole('cell').allTextContents()).map((text) => text.trim()))
      .toEqual(['acme', 'APP_MODE, SMTP_PASSWORD (secret)', '0', expect.any(String) as string]);
    page.off('request', record);
    expect(perGroup).toEqual([]);
    await screenshot(page, 'variable-groups');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('renames a group; a name another group has is refused with the reason', async () => {
    const { appUrl, customers } = inject('web');
    const [name, taken, renamed] = [
      uniqueName('ui-rename'),
      uniqueName('ui-taken'),
      uniqueName('ui-renamed'),
    ];
    const created = await Promise.all(
      [name, taken].map((groupName) =>
        adminCall<Group>('POST', '/api/variable-groups', { name: groupName, customer_id: customers.acme }),
      ),
    );
    await page.goto(`${appUrl}/variable-groups/${created[0]?.body.id ?? ''}`);
    await settled(page, name);
    const section = page.getByRole('region', { name: 'Rename', exact: true });
    await section.getByLabel('Group name').fill(taken);
    await section.getByRole('button', { name: 'Rename group' }).click();
    await section.getByRole('alert').filter({ hasText: taken }).waitFor();
    await section.getByLabel('Group name').fill(renamed);
    await section.getByRole('button', { name: 'Rename group' }).click();
    await section
      .getByRole('status')
      .filter({ hasText: `Renamed to ${renamed}` })
      .waitFor();
    await page.getByRole('heading', { level: 1, name: renamed }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    const after = await adminCall<Group>('GET', `/api/variable-groups/${created[0]?.body.id ?? ''}`);
    expect(after.body).toMatchObject({ name: renamed, version: 2 });
  });

  it('refuses an edit of a version changed meanwhile with a reload message, and saves after reloading', async () => {
    const { appUrl, customers } = inject('web');
    const name = uniqueName('ui-stale');
    const created = await adminCall<Group>('POST', '/api/variable-groups', {
      name,
      customer_id: customers.acme,
      secret_variables: { TOKEN: 'first-value' },
    });
    expect(created.status).toBe(201);
    await page.goto(`${appUrl}/variable-groups/${created.body.id}`);
    await settled(page, name);

    // Someone else saves the group after the page read it.
    const behind = await adminCall('PATCH', `/api/variable-groups/${created.body.id}`, {
      variables: { ADDED_MEANWHILE: 'yes' },
    });
    expect(behind.status).toBe(200);

    await page.getByLabel('New value for TOKEN').fill('lost-unless-reloaded');
    await page.getByRole('button', { name: 'Replace TOKEN' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'This group changed meanwhile' });
    await alert.waitFor();
    await screenshot(page, 'variable-group-stale');
    expect(await axeViolations(page)).toEqual([]);
    const reveal = () =>
      adminCall<{ value: string }>(
        'POST',
        `/api/variable-groups/${created.body.id}/secret-variables/reveal`,
        {
          name: 'TOKEN',
        },
      );
    expect((await reveal()).body.value).toBe('first-value');

    await alert.getByRole('button', { name: 'Reload group' }).click();
    await alert.waitFor({ state: 'detached' });
    // The form now shows the other change, and the edit goes through on the current version.
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('ADDED_MEANWHILE');
    await page.getByLabel('New value for TOKEN').fill('saved-after-reload');
    await page.getByRole('button', { name: 'Replace TOKEN' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret saved' }).waitFor();
    expect((await reveal()).body.value).toBe('saved-after-reload');
    expect((await adminCall<Group>('GET', `/api/variable-groups/${created.body.id}`)).body.variables).toEqual(
      {
        ADDED_MEANWHILE: 'yes',
      },
    );
  });

  it('attaches groups to a service in order, detaches them, and deletes a group only once unused', async () => {
    const { appUrl, customers } = inject('web');
    const service = await deployedService('acme', 'ui-attach');
    const [first, second] = await Promise.all(
      ['ui-first', 'ui-second'].map(async (prefix) => {
        const answer = await adminCall<Group>('POST', '/api/variable-groups', {
          name: uniqueName(prefix),
          customer_id: customers.acme,
          variables: { FROM: prefix },
        });
        expect(answer.status).toBe(201);
        return answer.body;
      }),
    );
    if (!first || !second) throw new Error('groups not created');

    await page.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(page, service.name);
    const section = page.getByRole('region', { name: 'Variable groups' });
    for (const group of [first, second]) {
      await section.getByLabel('Group to attach').selectOption({ label: group.name });
      await section.getByRole('button', { name: 'Attach group' }).click();
      await section.getByRole('status').filter({ hasText: 'Groups saved' }).waitFor();
      await section.getByRole('link', { name: group.name }).waitFor();
    }
    expect(await groupsOf(service.id)).toEqual([first.id, second.id]);
    expect(await axeViolations(page)).toEqual([]);

    // A group changed after the page listed it: the attach (If-Match) is refused and says why.
    const third = await adminCall<Group>('POST', '/api/variable-groups', {
      name: uniqueName('ui-third'),
      customer_id: customers.acme,
    });
    await page.reload();
    await settled(page, service.name);
    await adminCall('PATCH', `/api/variable-groups/${third.body.id}`, { variables: { LATE: 'yes' } });
    await section.getByLabel('Group to attach').selectOption({ label: third.body.name });
    await section.getByRole('button', { name: 'Attach group' }).click();
    await section
      .getByRole('status')
      .filter({ hasText: 'A group changed since this page listed it' })
      .waitFor();
    expect(await groupsOf(service.id)).toEqual([first.id, second.id]);

    await section.getByRole('button', { name: `Move ${second.name} up` }).click();
    await expect.poll(() => groupsOf(service.id)).toEqual([second.id, first.id]);
    const order = section.getByRole('list', { name: 'Attached variable groups, in order' });
    await expect
      .poll(async () => (await order.getByRole('link').allTextContents()).map((text) => text.trim()))
      .toEqual([second.name, first.name]);

    // Deleting a group a service uses is refused, naming the service.
    await page.goto(`${appUrl}/variable-groups/${first.id}`);
    await settled(page, first.name);
    await page
      .getByRole('region', { name: 'Attached services' })
      .getByRole('link', { name: service.name })
      .waitFor();
    const deleteButton = page.getByRole('button', { name: 'Delete group' });
    expect(await deleteButton.isDisabled()).toBe(true);
    await page.getByLabel(`Type the group name (${first.name}) to confirm`).fill(first.name);
    await deleteButton.click();
    await page.getByRole('alert').filter({ hasText: service.name }).waitFor();
    expect((await adminCall('GET', `/api/variable-groups/${first.id}`)).status).toBe(200);

    await page.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(page, service.name);
    await section.getByRole('button', { name: `Detach ${first.name}` }).click();
    await expect.poll(() => groupsOf(service.id)).toEqual([second.id]);

    await page.goto(`${appUrl}/variable-groups/${first.id}`);
    await settled(page, first.name);
    await page.getByLabel(`Type the group name (${first.name}) to confirm`).fill(first.name);
    await page.getByRole('button', { name: 'Delete group' }).click();
    await settled(page, 'Variable groups');
    expect((await adminCall('GET', `/api/variable-groups/${first.id}`)).status).toBe(404);
  });

  it('shows a viewer the names only, with no control', async () => {
    const { appUrl, customers } = inject('web');
    const service = await deployedService('acme', 'ui-group-viewer');
    const name = uniqueName('ui-viewer');
    const created = await adminCall<Group>('POST', '/api/variable-groups', {
      name,
      customer_id: customers.acme,
      variables: { VISIBLE_NAME: 'plain' },
      secret_variables: { HIDDEN_TOKEN: 'viewer-never-sees-this' },
    });
    expect(created.status).toBe(201);
    await adminCall('PATCH', `/api/services/${service.id}`, { variable_groups: [created.body.id] });

    const viewer = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'viewer') })
    ).newPage();
    await viewer.goto(`${appUrl}/variable-groups`);
    await settled(viewer, 'Variable groups');
    await viewer.getByRole('row', { name: new RegExp(name) }).waitFor();
    expect(await viewer.getByRole('button', { name: 'Create group' }).count()).toBe(0);

    await viewer.goto(`${appUrl}/variable-groups/${created.body.id}`);
    await settled(viewer, name);
    await viewer.getByRole('textbox', { name: 'HIDDEN_TOKEN', exact: true }).waitFor();
    for (const control of [
      'Reveal HIDDEN_TOKEN',
      'Add variable',
      'Add secret',
      'Delete group',
      'Rename group',
      'Redeploy attached services',
    ])
      expect(await viewer.getByRole('button', { name: control }).count(), control).toBe(0);
    expect(await viewer.content()).not.toContain('viewer-never-sees-this');
    expect(await axeViolations(viewer)).toEqual([]);

    await viewer.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(viewer, service.name);
    const section = viewer.getByRole('region', { name: 'Variable groups' });
    await section.getByRole('link', { name }).waitFor();
    expect(await section.getByRole('button').count()).toBe(0);
    expect(await section.getByLabel('Group to attach').count()).toBe(0);
    await viewer.context().close();
  });
});
