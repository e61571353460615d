import { createHmac } from 'node:crypto';
import { customerScope, type Principal } from '@hostctl/auth-policy';
import type {
  HookTarget,
  NewWebhookDelivery,
  ServicesStore,
  WebhookDelivery,
  WebhooksStore,
} from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import type { JobQueue } from '../../queue-client.js';
import { decodeBody, pushRequestOf, type PushRequest } from './push-payload.js';
import { deliveryHeaders, signatureProblem, type Provider } from './push-signatures.js';

export type WebhooksService = ReturnType<typeof createWebhooksService>;

export interface WebhooksServiceDeps {
  hooks: WebhooksStore;
  services: Pick<ServicesStore, 'findById'>;
  jobs: Pick<JobQueue, 'enqueueDeploy'>;
  /** WEBHOOK_SECRET_KEY, or a key derived from SESSION_SECRET when that is empty. */
  secretKey: string;
  publicUrl: string;
}

/** A delivery as the receiver saw it: the raw bytes the signature covers, never parsed before. */
export interface IncomingDelivery {
  hookId: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  contentType: string | undefined;
  sourceAddress: string;
}

export interface DeliveryAnswer {
  status: 202;
  body: {
    outcome: 'deployed' | 'ignored';
    message: string;
    deployment_id?: string;
    commit?: string;
  };
  target: HookTarget;
}

/** Methods whose deployments clone a repository: the ones a push can redeploy. */
const REPOSITORY_METHODS = new Set(['git', 'ai']);
// A hook id nobody has: unknown hooks cost the same HMAC as known ones.
const NO_HOOK = '00000000-0000-0000-0000-000000000000';

/**
 * The key hook secrets are derived from: WEBHOOK_SECRET_KEY, else one derived from SESSION_SECRET
 * under a label of its own, so a webhook secret never equals anything the session uses.
 */
export function webhookSecretKey(config: { WEBHOOK_SECRET_KEY: string; SESSION_SECRET: string }): string {
  if (config.WEBHOOK_SECRET_KEY !== '') return config.WEBHOOK_SECRET_KEY;
  return createHmac('sha256', config.SESSION_SECRET).update('hostctl push webhook secrets v1').digest('hex');
}

/**
 * Push webhooks (docs/webhooks.md). The secret is HMAC(server key, hook id): the database alone
 * does not reveal it, and rotation is a new hook id, which retires the old URL and secret together.
 */
export function createWebhooksService(deps: WebhooksServiceDeps) {
  const secretOf = (hookId: string): string =>
    `whs_${createHmac('sha256', deps.secretKey).update(`push-hook:${hookId}`).digest('base64url')}`;

  async function visibleOr404(principal: Principal, id: string) {
    const service = await deps.services.findById(customerScope(principal), id);
    if (!service) throw new DomainError('not_found', `service ${id} not found`);
    return service;
  }

  async function record(
    target: HookTarget,
    delivery: IncomingDelivery,
    facts: Pick<NewWebhookDelivery, 'provider' | 'event' | 'providerDeliveryId' | 'outcome' | 'statusCode'> &
      Partial<Pick<NewWebhookDelivery, 'branch' | 'commit' | 'reason' | 'deploymentId'>>,
  ): Promise<void> {
    await deps.hooks.record({
      serviceId: target.serviceId,
      hookId: target.hookId,
      sourceAddress: delivery.sourceAddress,
      branch: null,
      commit: null,
      reason: null,
      deploymentId: null,
      ...facts,
    });
  }

  /** Which branch a push must be on: the service's, or the repository's default when it names none. */
  function untracked(target: HookTarget, push: Extract<PushRequest, { kind: 'push' }>): string | null {
    const tracked = target.gitBranch ?? push.defaultBranch;
    if (tracked === null) return `the service tracks the default branch and the payload does not name it`;
    return push.branch === tracked ? null : `branch ${push.branch} is not tracked`;
  }

  return {
    async create(principal: Principal, id: string) {
      const service = await visibleOr404(principal, id);
      if (!REPOSITORY_METHODS.has(service.deployMethod))
        throw new DomainError(
          'conflict',
          `service ${id} deploys from ${service.deployMethod}, not a git repository: a push cannot redeploy it`,
        );
      const hook = await deps.hooks.replace(id);
      return {
        url: `${deps.publicUrl.replace(/\/+$/, '')}/hooks/push/${hook.id}`,
        secret: secretOf(hook.id),
        created_at: hook.createdAt.toISOString(),
        rotated: hook.rotated,
      };
    },

    async get(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      const hook = await deps.hooks.hookOf(id);
      const last = await deps.hooks.lastDelivery(id);
      return {
        exists: hook !== null,
        created_at: hook?.createdAt.toISOString() ?? null,
        last_delivery: last ? toDeliveryItem(last) : null,
      };
    },

    async remove(principal: Principal, id: string): Promise<void> {
      await visibleOr404(principal, id);
      await deps.hooks.remove(id);
    },

    async deliveries(principal: Principal, id: string, page: { page: number; perPage: number }) {
      await visibleOr404(principal, id);
      const { rows, total } = await deps.hooks.listDeliveries(id, page);
      return { data: rows.map(toDeliveryItem), total, page: page.page, per_page: page.perPage };
    },

    /**
     * One delivery: 404 for an unknown hook, 401 for a signature that does not hold (recorded as
     * rejected), else 202 saying what came of it (recorded as deployed or ignored).
     */
    async receive(delivery: IncomingDelivery): Promise<DeliveryAnswer> {
      const target = await deps.hooks.findTarget(delivery.hookId);
      const meta = deliveryHeaders(delivery.headers);
      const problem = signatureProblem(
        meta.provider,
        delivery.headers,
        delivery.body,
        secretOf(target?.hookId ?? NO_HOOK),
      );
      if (!target) throw new DomainError('not_found', 'no such webhook');
      const base = {
        provider: meta.provider ?? 'unknown',
        event: meta.event,
        providerDeliveryId: meta.deliveryId,
      };
      if (problem !== null) {
        await record(target, delivery, { ...base, outcome: 'rejected', statusCode: 401, reason: problem });
        throw new DomainError('unauthenticated', problem);
      }
      const provider = meta.provider as Provider;
      const ignored = async (
        reason: string,
        extra: { branch?: string; commit?: string; deploymentId?: string } = {},
      ): Promise<DeliveryAnswer> => {
        await record(target, delivery, { ...base, ...extra, outcome: 'ignored', statusCode: 202, reason });
        const deployment = extra.deploymentId ? { deployment_id: extra.deploymentId } : {};
        return {
          status: 202,
          target,
          body: { outcome: 'ignored', message: `ignored: ${reason}`, ...deployment },
        };
      };

      let payload: unknown;
      try {
        payload = decodeBody(delivery.body, delivery.contentType);
      } catch {
        return ignored('the body is not a JSON push payload');
      }
      const push = pushRequestOf(provider, meta.event, payload);
      if (push.kind === 'ignored')
        return ignored(push.reason, {
          ...(push.branch ? { branch: push.branch } : {}),
          ...(push.commit ? { commit: push.commit } : {}),
        });
      const pushed = { branch: push.branch, commit: push.commit };
      if (!REPOSITORY_METHODS.has(target.deployMethod))
        return ignored(`the service deploys from ${target.deployMethod}, not a git repository`, pushed);
      const notTracked = untracked(target, push);
      if (notTracked !== null) return ignored(notTracked, pushed);

      const result = await deps.hooks.deployPinned({
        serviceId: target.serviceId,
        hookId: target.hookId,
        sourceAddress: delivery.sourceAddress,
        ...base,
        ...pushed,
        reason: null,
      });
      // A redelivery answers with the first one's deployment and queues nothing new; enqueueing
      // again is a no-op for a job that exists and revives one lost before it reached Redis.
      await deps.jobs.enqueueDeploy(result.deploymentId);
      if (result.kind === 'duplicate')
        return ignored(`delivery ${meta.deliveryId ?? ''} was received before`, {
          ...pushed,
          deploymentId: result.deploymentId,
        });
      return {
        status: 202,
        target,
        body: {
          outcome: 'deployed',
          message: `deploying commit ${push.commit} of ${push.branch}`,
          deployment_id: result.deploymentId,
          commit: push.commit,
        },
      };
    },
  };
}

function toDeliveryItem(row: WebhookDelivery) {
  return {
    id: row.id,
    received_at: row.receivedAt.toISOString(),
    provider: row.provider,
    event: row.event,
    delivery_id: row.providerDeliveryId,
    branch: row.branch,
    commit: row.commit,
    outcome: row.outcome as 'deployed' | 'ignored' | 'rejected',
    status_code: row.statusCode,
    reason: row.reason,
    deployment_id: row.deploymentId,
    source_address: row.sourceAddress,
  };
}
