import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// git/ai sources get the URL and branch policy at create time (no network involved): a refused
// request is a 400 naming the field and stores nothing. 127.0.0.1 is allowlisted here, as in dev.
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1, git.lab.test' });
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

function post(body: Record<string, unknown>) {
  return h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: admin.auth },
    payload: { name: uniqueName('git'), customer_id: customerId, ...body },
  });
}

describe('POST /api/services with a repository source', () => {
  it.each([
    [{ deploy_method: 'git', git_url: 'file:///etc' }, '/body/git_url', /scheme file/],
    [{ deploy_method: 'git', git_url: 'ext::sh' }, '/body/git_url', /remote-helper/],
    [{ deploy_method: 'git', git_url: '/srv/repo.git' }, '/body/git_url', /local paths/],
    [{ deploy_method: 'git', git_url: 'https://tok@github.com/o/r.git' }, '/body/git_url', /credentials/],
    [{ deploy_method: 'git', git_url: 'https://10.0.0.8/o/r.git' }, '/body/git_url', /private/],
    [{ deploy_method: 'git', git_url: 'https://169.254.169.254/x' }, '/body/git_url', /link-local/],
    [{ deploy_method: 'git', git_url: 'http://github.com/o/r.git' }, '/body/git_url', /GIT_ALLOWED_HOSTS/],
    [{ deploy_method: 'git', git_url: 'https://localhost/o/r.git' }, '/body/git_url', /localhost/],
    [
      { deploy_method: 'git', git_url: 'https://github.com/o/r.git', git_branch: '-x' },
      '/body/git_branch',
      /"-"/,
    ],
    [
      { deploy_method: 'git', git_url: 'https://github.com/o/r.git', git_branch: 'a..b' },
      '/body/git_branch',
      /\.\./,
    ],
    [{ deploy_method: 'ai', ai_url: '--upload-pack=x' }, '/body/ai_url', /"-"/],
    [{ deploy_method: 'ai', ai_url: 'git://github.com/o/r.git' }, '/body/ai_url', /GIT_ALLOWED_HOSTS/],
  ])('%j → 400 naming %s', async (body, path, reason) => {
    const name = uniqueName('refused');
    const response = await post({ ...body, name });
    expect(response.statusCode).toBe(400);
    const problem = json<{ code: string; errors: { path: string; message: string }[] }>(response);
    expect(problem.code).toBe('validation_failed');
    const error = problem.errors.find((e) => e.path === path);
    expect(error?.message).toMatch(reason);
    const list = await h.app.inject({
      url: `/api/services?search=${name}`,
      headers: { authorization: admin.auth },
    });
    expect(json<{ data: unknown[] }>(list).data).toHaveLength(0);
  });

  it.each([
    // Reserved .test names: should a worker ever sweep this database, nothing public is contacted.
    { deploy_method: 'git', git_url: 'https://git.example.test/org/repo.git', git_branch: 'release/1.2' },
    { deploy_method: 'git', git_url: 'git@git.example.test:org/repo.git' },
    { deploy_method: 'git', git_url: 'git://127.0.0.1:9418/repo.git' },
    { deploy_method: 'ai', ai_url: 'http://git.lab.test/org/site.git' },
  ])('accepts %j', async (body) => {
    const response = await post(body);
    expect(response.statusCode).toBe(201);
    expect(json(response)).toMatchObject({ status: 'deploying', deploy_job_id: expect.any(String) });
  });
});
