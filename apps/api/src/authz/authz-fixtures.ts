import { generateApiKey } from '@hostctl/auth-policy';
import type { Role } from '@hostctl/domain';
import { cookieNames } from '../auth/session-cookies.js';
import { createSessionStore } from '../auth/session-store.js';
import { json, uniqueName, type Harness } from '../test-support/harness.js';
import { addDeployment, settleFirst } from '../test-support/releases.js';
import { insertNode } from '../test-support/nodes.js';

/**
 * The world the authorization tests run in: customers A and B, one caller per role × scope, and
 * factories for target resources that belong to customer A. "own" callers are scoped to A (the
 * target's customer), "other" callers to B, "unscoped" callers to none.
 */
export const ROLES_UNDER_TEST = ['admin', 'operator', 'viewer'] as const satisfies readonly Role[];
export const SCOPES = ['unscoped', 'own', 'other'] as const;
export type CallerScope = (typeof SCOPES)[number];

export interface Caller {
  role: Role;
  scope: CallerScope;
  userId: string;
  /** Authorization header value of an API key. */
  auth: string;
  customerId: string | null;
}

export interface Fixtures {
  h: Harness;
  customerA: string;
  customerB: string;
  callers: Caller[];
  /** Unscoped admin outside the matrix, used to build targets. */
  root: string;
  /** A service of A that only read routes touch (it stays put). */
  serviceA: string;
  deploymentA: string;
  /** A swarm node row (platform-wide: no customer owns it). */
  node: string;
  /** A fresh service of A in status `running` for a route that changes it. */
  freshService(): Promise<string>;
  /** A fresh service of A that deploys from git (push webhooks need one). */
  freshGitService(): Promise<string>;
  /** A fresh running service of A with two releases, so a rollback has somewhere to go. */
  freshReleases(): Promise<string>;
  /** A fresh queued deployment of A (its service just created), for cancel. */
  freshDeployment(): Promise<string>;
  /** A fresh user (with one API key) for routes that change users or keys. */
  freshUser(role: Role, customerId: string | null): Promise<{ id: string; keyId: string }>;
  /** The name of a fresh quota plan no customer uses, for its delete. */
  freshQuotaPlan(): Promise<string>;
  /** Headers of a fresh browser session of the caller (cookie plus same-origin Origin). */
  session(caller: Caller): Promise<Record<string, string>>;
}

export async function buildFixtures(h: Harness): Promise<Fixtures> {
  const [a, b] = await Promise.all([h.customer(), h.customer()]);
  const scopeCustomer: Record<CallerScope, string | null> = { unscoped: null, own: a.id, other: b.id };
  const callers = await Promise.all(
    ROLES_UNDER_TEST.flatMap((role) =>
      SCOPES.map(async (scope) => {
        const customerId = scopeCustomer[scope];
        const user = await h.user(role, customerId);
        return { role, scope, userId: user.id, auth: user.auth, customerId };
      }),
    ),
  );
  const root = (await h.user('admin')).auth;
  const created = await h.createService(root, { customer_id: a.id });
  const sessions = createSessionStore({
    redis: h.container.redis,
    prefix: h.config.QUEUE_PREFIX,
    ttlSeconds: 600,
  });
  const origin = new URL(h.config.PUBLIC_URL).origin;
  const node = await insertNode(h.container.db, {
    instance: h.config.QUEUE_PREFIX,
    serviceIds: [created.id],
  });

  return {
    h,
    customerA: a.id,
    customerB: b.id,
    callers,
    root,
    serviceA: created.id,
    deploymentA: created.deploy_job_id,
    node: node.id,
    async freshService() {
      const { id } = await h.createService(root, { customer_id: a.id, name: uniqueName('authz') });
      // Lifecycle actions on a service that is still deploying are 409 for everyone; the matrix
      // is about who may act, so the service is put where every action is accepted.
      await h.container.db.service.update({ where: { id }, data: { status: 'running' } });
      return id;
    },
    async freshGitService() {
      const { id } = await h.createService(root, { customer_id: a.id, name: uniqueName('authz') });
      // Who may manage a hook does not depend on the repository: no clone happens here.
      await h.container.db.service.update({
        where: { id },
        data: { deployMethod: 'git', gitUrl: 'https://git.example.test/o/r.git', gitBranch: 'main' },
      });
      return id;
    },
    async freshReleases() {
      const { id, deploy_job_id } = await h.createService(root, {
        customer_id: a.id,
        name: uniqueName('authz'),
      });
      await settleFirst(h, id, deploy_job_id, { at: 0 });
      await addDeployment(h, id, { at: 60 });
      return id;
    },
    async freshDeployment() {
      return (await h.createService(root, { customer_id: a.id, name: uniqueName('authz') })).deploy_job_id;
    },
    async freshQuotaPlan() {
      const name = uniqueName('plan');
      await h.container.db.quotaPlan.create({ data: { name, limits: { services: 1 } } });
      return name;
    },
    async freshUser(role, customerId) {
      const user = await h.store.createUser({
        email: `${uniqueName(role)}@authz.example.test`,
        name: `Target ${role}`,
        role,
        customerId,
      });
      const { digest } = generateApiKey();
      const key = await h.store.createApiKey({ userId: user.id, name: 'target', digest, expiresAt: null });
      return { id: user.id, keyId: key.id };
    },
    async session(caller) {
      const { secret } = await sessions.create({
        userId: caller.userId,
        createdAt: new Date().toISOString(),
        idToken: null,
      });
      const sealed = h.app.encodeSecureSession(h.app.createSecureSession({ sid: secret }), 'session');
      return {
        cookie: `${cookieNames(h.config.COOKIE_SECURE).session}=${encodeURIComponent(sealed)}`,
        origin,
      };
    },
  };
}

export { json };
