import type { Provider } from './push-signatures.js';

/**
 * What a signed delivery asks for. GitHub, GitLab, Gitea and Forgejo push payloads share the
 * fields read here (`ref`, `after`, and the repository's default branch); anything else about the
 * event is ignored with a reason the sender sees and the delivery log keeps.
 */
export type PushRequest =
  | { kind: 'push'; branch: string; commit: string; defaultBranch: string | null }
  | { kind: 'ignored'; reason: string; branch?: string; commit?: string };

const PUSH_EVENTS: Record<Provider, string> = {
  github: 'push',
  gitlab: 'Push Hook',
  gitea: 'push',
  forgejo: 'push',
};
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const ZERO_SHA = /^0+$/;
const MAX_BRANCH = 255;

/** GitHub may send `application/x-www-form-urlencoded` with the JSON in `payload`. */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  const json = /^application\/x-www-form-urlencoded/i.test(contentType ?? '')
    ? (new URLSearchParams(text).get('payload') ?? '')
    : text;
  return JSON.parse(json) as unknown;
}

const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export function pushRequestOf(provider: Provider, event: string | null, payload: unknown): PushRequest {
  if (event !== PUSH_EVENTS[provider]) {
    const name = event ?? 'none';
    return {
      kind: 'ignored',
      reason: name === 'ping' ? 'ping event' : `event ${name} is not a push`,
    };
  }
  const ref = text(field(payload, 'ref'));
  if (ref === null) return { kind: 'ignored', reason: 'push payload without a ref' };
  if (!ref.startsWith('refs/heads/')) return { kind: 'ignored', reason: `${ref} is not a branch` };
  const branch = ref.slice('refs/heads/'.length);
  if (branch === '' || branch.length > MAX_BRANCH || /[\u0000-\u001f\u007f]/.test(branch))
    return { kind: 'ignored', reason: 'push payload with an unusable branch name' };
  const after = text(field(payload, 'after'))?.toLowerCase() ?? '';
  if (ZERO_SHA.test(after)) return { kind: 'ignored', reason: `branch ${branch} was deleted`, branch };
  if (!SHA.test(after)) return { kind: 'ignored', reason: 'push payload without a commit id', branch };
  const repository = field(payload, provider === 'gitlab' ? 'project' : 'repository');
  return { kind: 'push', branch, commit: after, defaultBranch: text(field(repository, 'default_branch')) };
}
