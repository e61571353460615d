import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { TEST_IMAGE } from './env.js';

/**
 * A one-off run started from the Jobs tab (docs/jobs.md#in-the-dashboard): an operator writes the
 * command one argument per line, picks a component of the current release and a timeout; the real
 * worker runs it and the tab follows its output live, line by line, to its end
 * (docs/jobs.md#following-a-run); a finished run shows the output the API kept. A viewer has no
 * form at all: every run route needs services:operate, which a viewer does not hold.
 */
let browser: Browser;
let page: Page;

// Two components, so the choice matters: the run must take the tasks component's variables.
const TWO_COMPONENTS = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "httpd -f -p 8080 -h /www"]
    ports: ["8080"]
  tasks:
    image: ${TEST_IMAGE}
    command: ["sleep", "3600"]
    environment:
      ROLE: tasks-component
`;

interface Run {
  id: string;
  command: string[];
  component: string | null;
  timeout: number;
  status: string;
  exit_code: number | null;
  output: string;
}

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
});
afterAll(async () => browser?.close());

async function twoComponentService(): Promise<{ id: string; name: string }> {
  const name = uniqueName('ui-run');
  const created = await adminCall<{ id: string; deploy_job_id: string }>('POST', '/api/services', {
    name,
    customer_id: inject('web').customers.acme,
    deploy_method: 'compose',
    compose: TWO_COMPONENTS,
  });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status}`);
  const done = await adminCall<{ status: string }>(
    'GET',
    `/api/deployments/${created.body.deploy_job_id}?wait=90`,
  );
  if (done.body.status !== 'succeeded') throw new Error(`deploy of ${name} ended ${done.body.status}`);
  return { id: created.body.id, name };
}

const runsOf = async (serviceId: string) =>
  (await adminCall<{ data: Run[] }>('GET', `/api/services/${serviceId}/runs`)).body.data;

async function descriptionOf(control: Locator): Promise<string> {
  const ids = (await control.getAttribute('aria-describedby'))?.split(' ') ?? [];
  return (await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).innerText()))).join(' ');
}

describe('a one-off run from the dashboard', () => {
  it('starts the command as an argv in the chosen component and shows it until it ends', async () => {
    const { appUrl } = inject('web');
    const service = await twoComponentService();
    const marker = `ran-${Date.now().toString(36)}`;

    await page.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(page, service.name);
    await page.getByRole('button', { name: 'Run a command' }).click();
    const form = page.getByRole('region', { name: 'Run a command' });
    const component = form.getByLabel('Component');
    // The components of the current release, the default first.
    await expect
      .poll(() => component.locator('option').allInnerTexts(), { timeout: 15_000 })
      .toEqual(['the web component (default)', 'tasks', 'web']);

    // A blank program: the API refuses it, the form shows its message under Command, nothing runs.
    const command = form.getByLabel('Command');
    await command.fill('   \n-c');
    await form.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => command.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(command)).toMatch(/first element names the program/);
    expect(await form.getByRole('alert').innerText()).toContain('/body/command');
    expect(await runsOf(service.id)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'jobs-run-form-error');

    // One argument per line: the script is one argument, spaces and quotes included.
    const script = `echo "${marker} in $ROLE"; sleep 1; echo 'to stderr' >&2; exit 4`;
    await command.fill(`sh\n-c\n${script}`);
    await component.selectOption('tasks');
    await form.getByLabel('Timeout (seconds)').fill('90');
    await form.getByRole('button', { name: 'Start run' }).click();

    const panel = page.getByRole('region', { name: /^Run [0-9a-f]{8}$/ });
    await panel.waitFor();
    expect(await form.count()).toBe(0);
    // The panel takes the focus from the form that closed.
    expect(await panel.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
    const [started] = await runsOf(service.id);
    expect(started).toMatchObject({ command: ['sh', '-c', script], component: 'tasks', timeout: 90 });
    expect(await panel.getByRole('heading').innerText()).toBe(`Run ${started!.id.slice(0, 8)}`);

    const output = panel.getByLabel(/^Output of run/);
    await expect
      .poll(() => output.innerText(), { timeout: 90_000 })
      .toContain(`${marker} in tasks-component`);
    // The script sleeps a second after the marker: the end comes later than a default poll's 1 s.
    await expect
      .poll(() => panel.getByRole('status').innerText(), { timeout: 30_000 })
      .toMatch(/failed\s+exit code 4/);
    expect(await output.innerText()).toContain('to stderr');
    const final = (await adminCall<Run>('GET', `/api/runs/${started!.id}`)).body;
    expect(final).toMatchObject({ status: 'failed', exit_code: 4 });
    // The history lists it as a one-off run with its outcome.
    const row = page
      .getByRole('region', { name: 'Runs of the service' })
      .getByRole('row', { name: /one-off run/ });
    await expect.poll(() => row.innerText(), { timeout: 15_000 }).toMatch(/failed\s+4/);
    await screenshot(page, 'jobs-run-started');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('shows a running command’s lines as they are printed, then its end; later its stored output', async () => {
    const { appUrl } = inject('web');
    const service = await twoComponentService();
    const marker = `live-${Date.now().toString(36)}`;
    await page.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(page, service.name);
    await page.getByRole('button', { name: 'Run a command' }).click();
    const form = page.getByRole('region', { name: 'Run a command' });
    // The second line waits long enough to see the first alone while the run is running.
    const script = `echo "first ${marker}"; sleep 8; echo "second ${marker}" >&2; exit 3`;
    await form.getByLabel('Command').fill(`sh\n-c\n${script}`);
    await form.getByRole('button', { name: 'Start run' }).click();

    const panel = page.getByRole('region', { name: /^Run [0-9a-f]{8}$/ });
    const output = panel.getByRole('region', { name: /^Output of run/ });
    await expect.poll(() => output.innerText(), { timeout: 60_000 }).toContain(`first ${marker}`);
    const [run] = await runsOf(service.id);
    // While it runs the API keeps no output yet: these lines came over the live stream.
    expect((await adminCall<Run>('GET', `/api/runs/${run!.id}`)).body).toMatchObject({
      status: 'running',
      output: '',
    });
    // The first line has the run read again: its status is not left at queued until the next poll.
    await expect
      .poll(() => panel.getByRole('status').innerText(), { timeout: 3_000 })
      .toMatch(/^\s*running\s*$/);
    expect(await output.innerText()).not.toContain(`second ${marker}`);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'jobs-run-live');

    await expect
      .poll(() => panel.getByRole('status').innerText(), { timeout: 30_000 })
      .toMatch(/failed\s+exit code 3/);
    const rows = (await output.innerText()).split('\n').filter((row) => row.includes(marker));
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(`second ${marker}`);
    expect(await output.locator('.stderr').innerText()).toContain(`second ${marker}`);

    // Opened again, the finished run shows what the API stored, as before.
    await panel.getByRole('button', { name: /^Close run/ }).click();
    await page
      .getByRole('region', { name: 'Runs of the service' })
      .getByRole('button', { name: `Show log of run ${run!.id.slice(0, 8)}` })
      .click();
    const stored = panel.getByRole('log', { name: /^Output of run/ });
    await expect.poll(() => stored.innerText(), { timeout: 15_000 }).toContain(`second ${marker}`);
    expect(await stored.innerText()).toContain(`first ${marker}`);
    expect(await panel.getByRole('status').innerText()).toMatch(/failed\s+exit code 3/);
  });

  it('is not offered to a viewer, whose role may not run commands', async () => {
    const { appUrl } = inject('web');
    const service = await twoComponentService();
    const viewer = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'viewer') })
    ).newPage();
    await viewer.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(viewer, service.name);
    await viewer.getByText(/shown to operators and admins only/).waitFor();
    expect(await viewer.getByRole('button', { name: 'Run a command' }).count()).toBe(0);
    expect(await viewer.getByRole('textbox', { name: 'Command' }).count()).toBe(0);
    // The API's rule the dashboard follows: a viewer's run is refused.
    const refused = await viewer.evaluate(async (id) => {
      const response = await fetch(`/api/services/${id}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: ['true'] }),
      });
      return response.status;
    }, service.id);
    expect(refused).toBe(403);
    expect(await runsOf(service.id)).toEqual([]);
    await viewer.context().close();
  });
});
