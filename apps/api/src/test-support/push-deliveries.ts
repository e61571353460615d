import { createHmac, randomUUID } from 'node:crypto';
import { json, type Harness } from './harness.js';

/**
 * A forge's side of push webhooks for API tests: a git service with a hook, and deliveries signed
 * the way each forge signs them (docs/webhooks.md). Sent through `app.inject`, like any client.
 */
export interface TestHook {
  serviceId: string;
  id: string;
  secret: string;
}

export async function gitServiceWithHook(
  h: Harness,
  auth: string,
  customerId: string,
  branch = 'main',
): Promise<TestHook> {
  const service = await h.createService(auth, {
    customer_id: customerId,
    deploy_method: 'git',
    git_url: 'git://127.0.0.1:40000/repo.git',
    git_branch: branch,
  });
  const created = await h.app.inject({
    method: 'POST',
    url: `/api/services/${service.id}/webhook`,
    headers: { authorization: auth },
  });
  if (created.statusCode !== 201) throw new Error(`webhook not created: ${created.statusCode}`);
  const hook = json<{ url: string; secret: string }>(created);
  return { serviceId: service.id, id: new URL(hook.url).pathname.split('/').pop()!, secret: hook.secret };
}

export const randomSha = (): string => createHmac('sha1', randomUUID()).digest('hex');

export const pushBody = (branch: string, commit: string): string =>
  JSON.stringify({ ref: `refs/heads/${branch}`, after: commit, repository: { default_branch: 'main' } });

const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** The headers each HMAC forge sends: the same HMAC over the same body, under its own names. */
export const SIGNERS = {
  github: (secret: string, body: string, id: string) => ({
    'x-github-event': 'push',
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${hex(secret, body)}`,
  }),
  gitea: (secret: string, body: string, id: string) => ({
    'x-gitea-event': 'push',
    'x-gitea-delivery': id,
    'x-gitea-signature': hex(secret, body),
  }),
  forgejo: (secret: string, body: string, id: string) => ({
    'x-forgejo-event': 'push',
    'x-forgejo-delivery': id,
    'x-forgejo-signature': hex(secret, body),
  }),
} satisfies Record<string, (secret: string, body: string, id: string) => Record<string, string>>;

export function deliver(h: Harness, hookId: string, body: string, headers: Record<string, string>) {
  return h.app.inject({
    method: 'POST',
    url: `/hooks/push/${hookId}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

/** A post without the secret: GitHub's headers, a signature made up by the sender. */
export function deliverUnsigned(h: Harness, hookId: string, body: string) {
  return deliver(h, hookId, body, {
    'x-github-event': 'push',
    'x-github-delivery': randomUUID(),
    'x-hub-signature-256': `sha256=${hex('whs_guessed', body)}`,
  });
}
