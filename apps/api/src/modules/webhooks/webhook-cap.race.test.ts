import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * One push webhook per service, raced (issue 27, class 8; docs/security/limits.md#count-caps):
 * creates sent together for one service each answer 201 (a create is a rotation) and one hook is
 * left, the one whose URL the last answer carried. The unique key on service_id held the cap, but
 * the delete-then-insert of two racing rotations collided on it and answered 500.
 */
let h: Harness;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000' });
  admin = await h.user('admin');
});
afterAll(async () => h?.close());

describe('push webhooks per service, raced', () => {
  it('20 parallel creates: every one a 201, one hook left', async () => {
    const service = await h.createService(admin.auth, {
      deploy_method: 'git',
      git_url: 'git://127.0.0.1:40000/repo.git',
      git_branch: 'main',
    });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.app.inject({
          method: 'POST',
          url: `/api/services/${service.id}/webhook`,
          headers: { authorization: admin.auth },
        }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(201));
    const hooks = await h.container.db.serviceWebhook.findMany({ where: { serviceId: service.id } });
    expect(hooks).toHaveLength(1);
    const urls = responses.map((response) => json<{ url: string }>(response).url);
    expect(urls).toContain(`${h.config.PUBLIC_URL.replace(/\/+$/, '')}/hooks/push/${hooks[0]!.id}`);
  });
});
