import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// Issue 12: a tenant names only images it may run, and no image reference reaches the engine, the
// control plane or a private network. Each refusal is a 400 naming the field and stores nothing.
// The configuration is the dev stack's (scripts/lib/env.sh); nothing here opens a connection.
let h: Harness;
let tenant: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness({
    PLATFORM_IMAGES: 'local/*',
    REGISTRY_ALLOWED_HOSTS: '127.0.0.1:5000',
    GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999,localhost:32768-60999',
  });
  customerId = (await h.customer()).id;
  tenant = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const compose = (image: string) =>
  `services:\n  web:\n    image: ${JSON.stringify(image)}\n    ports: ["8080"]\n`;

function post(body: Record<string, unknown>) {
  return h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: tenant.auth },
    payload: { name: uniqueName('img'), customer_id: customerId, deploy_method: 'compose', ...body },
  });
}

async function expectRefused(response: Awaited<ReturnType<typeof post>>, path: string, name?: string) {
  expect(response.statusCode, response.body).toBe(400);
  expect(String(response.headers['content-type'])).toContain('application/problem+json');
  const problem = json<{ errors: { path: string; message: string }[] }>(response);
  expect(problem.errors.map((e) => e.path)).toContain(path);
  if (name) {
    const list = await h.app.inject({
      url: `/api/services?search=${name}`,
      headers: { authorization: tenant.auth },
    });
    expect(json<{ total: number }>(list).total).toBe(0);
  }
  return problem.errors.find((e) => e.path === path)!.message;
}

const hex64 = '0123456789abcdef'.repeat(4);
const FIELD = '/body/compose/services/web/image';

describe('compose image references that are not Docker references', () => {
  it.each([
    ['traversal', 'x/../../containers/foo'],
    ['traversal to the engine root', '../../../info'],
    ['dot segment', 'local/./busybox:1'],
    ['encoded traversal', 'x/%2e%2e/%2e%2e/containers/foo'],
    ['encoded slash', 'local%2Fbusybox:1'],
    ['upper case', 'Local/BusyBox:1'],
    ['space', 'local/busybox:1 --privileged'],
    ['tab', 'local/busybox:\t1'],
    ['newline', 'local/busybox:1\nx'],
    ['query string', 'local/busybox:1?fromImage=evil'],
    ['query in the name', 'local/busybox?x=1'],
    ['fragment', 'local/busybox:1#x'],
    ['fragment in the name', 'local/busy#box'],
    ['backslash', 'local\\busybox:1'],
    ['leading slash', '/local/busybox:1'],
    ['double slash', 'local//busybox:1'],
    ['overlong name', `local/${'a'.repeat(300)}:1`],
    ['overlong tag', `local/busybox:${'a'.repeat(200)}`],
    ['overlong reference', `r.example.com/${'a/'.repeat(400)}x`],
    ['id prefix', '479b'],
    ['12-hex id prefix', '479b0c5bd0e2'],
    ['full id', hex64],
    ['sha256 id', `sha256:${hex64}`],
    ['sha256 id prefix', 'sha256:479b'],
    ['bad digest', 'local/busybox@sha256:xyz'],
    ['empty', ''],
    ['non-ASCII', 'local/büsybox:1'],
  ])('%s → 400', async (_label, image) => {
    const name = uniqueName('bad');
    await expectRefused(await post({ name, compose: compose(image) }), FIELD, name);
  });
});

describe('images the tenant may not run', () => {
  it.each([
    [
      'another service’s built image',
      'hostctl/0123456789ab:0123456789abcdef0123456789abcdef01234567',
      /reserved/,
    ],
    ['a multi-container built image', 'hostctl/0123456789ab-web:deadbeef', /reserved/],
    ['a built image via the registry', '127.0.0.1:5000/hostctl/0123456789ab:deadbeef', /reserved/],
    ['a built image via Docker Hub', 'docker.io/hostctl/0123456789ab:1', /reserved/],
    ['an unlisted host-less image', 'busybox:1.36', /platform image/],
    ['an unlisted host-less repository', 'someone/else:1', /platform image/],
    ['a numeric host-less name', '2130706433/x:1', /platform image/],
  ])('%s → 400', async (_label, image, reason) => {
    const name = uniqueName('deny');
    expect(await expectRefused(await post({ name, compose: compose(image) }), FIELD, name)).toMatch(reason);
  });
});

describe('registry hosts that are the control plane or not public', () => {
  it.each([
    ['Caddy admin', '127.0.0.1:2019/x/y:1', /control-plane/],
    ['PowerDNS API', 'localhost:8081/x/y:1', /control-plane/],
    ['Redis over IPv6 loopback', '[::1]:6379/x:1', /control-plane/],
    ['PostgreSQL on another loopback address', '127.0.0.2:5432/x:1', /control-plane/],
    ['the API', '127.0.0.1:3000/x:1', /control-plane/],
    ['the dev OIDC provider', '127.0.0.1:3100/x:1', /control-plane/],
    ['unspecified address on the Caddy port', '0.0.0.0:2019/x:1', /control-plane/],
    ['cloud metadata', '169.254.169.254/latest:1', /link-local/],
    ['cloud metadata with a port', '169.254.169.254:80/latest/meta-data:1', /link-local/],
    ['loopback without port', '127.0.0.1/x:1', /loopback/],
    ['loopback on an unlisted port', '127.0.0.1:5001/x:1', /loopback/],
    ['loopback shorthand', '127.1/x:1', /canonical/],
    ['loopback shorthand with port', '127.1:5000/x:1', /canonical/],
    ['hex loopback', '0x7f.0.0.1:5000/x:1', /canonical/],
    ['decimal loopback', '2130706433:5000/x:1', /canonical/],
    ['unspecified address', '0.0.0.0:5000/x:1', /unspecified/],
    ['private network', '10.0.0.1:5000/x:1', /private/],
    ['IPv6 unique-local', '[fd00::1]:5000/x:1', /unique-local/],
    ['IPv4-mapped loopback', '[::ffff:127.0.0.1]:5000/x:1', /loopback/],
    ['localhost', 'localhost:5000/x:1', /localhost/],
    ['a *.localhost name', 'registry.localhost/x:1', /localhost/],
  ])('%s → 400', async (_label, image, reason) => {
    const name = uniqueName('ssrf');
    expect(await expectRefused(await post({ name, compose: compose(image) }), FIELD, name)).toMatch(reason);
  });

  it('names every refused service of a multi-service compose', async () => {
    const response = await post({
      compose:
        'services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n  a:\n    image: 127.0.0.1:2019/x:1\n  b:\n    image: "479b"\n',
    });
    expect(response.statusCode).toBe(400);
    const paths = json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/body/compose/services/a/image', '/body/compose/services/b/image']),
    );
    expect(paths).not.toContain(FIELD);
  });
});

describe('images that stay allowed', () => {
  it.each(['local/busybox:1', '127.0.0.1:5000/busybox:1', `127.0.0.1:5000/busybox@sha256:${hex64}`])(
    '%s → 201',
    async (image) => {
      const response = await post({ compose: compose(image) });
      expect(response.statusCode, response.body).toBe(201);
    },
  );
});

describe('images from template variables and PATCH', () => {
  it('refuses a template variable that renders a forbidden image, naming the variables', async () => {
    for (const image of ['127.0.0.1:2019/x:1', 'hostctl/0123456789ab:1', '479b', 'x/../../containers/foo']) {
      const response = await post({
        deploy_method: 'template',
        template_id: 'busybox-web',
        variables: { IMAGE: image },
      });
      expect(response.statusCode, image).toBe(400);
      const paths = json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path);
      expect(
        paths.some((p) => p.startsWith('/body/compose') || p === '/body/variables'),
        image,
      ).toBe(true);
    }
  });

  it('allows the template’s own default image (platform images come from the catalog)', async () => {
    const response = await post({ deploy_method: 'template', template_id: 'busybox-web' });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses a PATCH whose variables turn the image into a forbidden one, and keeps the old value', async () => {
    const created = await post({
      compose: 'services:\n  web:\n    image: ${IMG:-local/busybox:1}\n    ports: ["8080"]\n',
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = json<{ id: string }>(created);
    for (const IMG of ['127.0.0.1:2019/x:1', '169.254.169.254/x:1', 'hostctl/0123456789ab:1', '479b']) {
      const response = await h.app.inject({
        method: 'PATCH',
        url: `/api/services/${id}`,
        headers: { authorization: tenant.auth },
        payload: { variables: { IMG } },
      });
      expect(response.statusCode, IMG).toBe(400);
      expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(
        '/body/variables',
      );
    }
    const detail = await h.app.inject({
      url: `/api/services/${id}`,
      headers: { authorization: tenant.auth },
    });
    expect(JSON.stringify(json(detail))).not.toContain('2019');
  });
});

describe('git URLs: allowlist entries are host and port', () => {
  it.each([
    'git://127.0.0.1:2019/repo.git',
    'http://127.0.0.1:8081/repo.git',
    'http://localhost:6379/repo.git',
    'http://127.0.0.1:5432/repo.git',
    'http://127.0.0.1:3000/repo.git',
    'http://127.0.0.1:3100/repo.git',
    'git://127.0.0.1/repo.git',
    'http://127.0.0.1/repo.git',
    'git://127.0.0.1:5000/repo.git',
    'git://[::1]:40000/repo.git',
  ])('%s → 400', async (git_url) => {
    const name = uniqueName('git');
    await expectRefused(
      await post({ name, deploy_method: 'git', git_url, compose: undefined }),
      '/body/git_url',
      name,
    );
  });

  it('still accepts a git server on an allowlisted ephemeral port', async () => {
    const response = await post({ deploy_method: 'git', git_url: 'git://127.0.0.1:40123/repo.git' });
    expect(response.statusCode, response.body).toBe(201);
  });
});
