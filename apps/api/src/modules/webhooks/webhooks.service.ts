import { createHash, createHmac } from 'node:crypto';
import { customerScope, type Principal } from '@hostctl/auth-policy';
import type {
  HookTarget,
  NewWebhookDelivery,
  ServicesStore,
  SignedBody,
  WebhookDelivery,
  WebhooksStore,
} from '@hostctl/db';
import { DomainError, isRepositoryMethod } from '@hostctl/domain';
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

/**
 * Which rate-limit budget a post spends, told before any database work: `true` once its signature
 * holds, so unsigned posts never spend what the forge's deliveries need (docs/webhooks.md).
 */
type AdmitDelivery = (isSigned: boolean) => Promise<void>;

const DUPLICATE = 'duplicate: this signed body was received before';
const STOPPED = 'the service is stopped: a push never starts it (start it, then push or redeploy)';

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

  /** A delivery whose signature held: deduplicated on its body, whatever its delivery id or forge. */
  async function answerSigned(
    target: HookTarget,
    delivery: IncomingDelivery,
    provider: Provider,
    base: Pick<NewWebhookDelivery, 'provider' | 'event' | 'providerDeliveryId'>,
  ): Promise<DeliveryAnswer> {
    const signed: SignedBody = {
      serviceId: target.serviceId,
      hookId: target.hookId,
      bodyDigest: createHash('sha256').update(delivery.body).digest('hex'),
    };
    type Facts = { branch?: string; commit?: string; deploymentId?: string | null };
    const ignored = async (reason: string, extra: Facts = {}): Promise<DeliveryAnswer> => {
      const { deploymentId, ...pushed } = extra;
      const deployment = deploymentId ? { deploymentId } : {};
      await record(target, delivery, {
        ...base,
        ...pushed,
        ...deployment,
        outcome: 'ignored',
        statusCode: 202,
        reason,
      });
      return {
        status: 202,
        target,
        body: {
          outcome: 'ignored',
          message: `ignored: ${reason}`,
          ...(deploymentId ? { deployment_id: deploymentId } : {}),
        },
      };
    };
    // Deploys nothing, but the body is remembered: replayed later (once the branch is tracked or
    // the service started), it must still be a duplicate.
    const skipped = async (reason: string, extra: Facts = {}): Promise<DeliveryAnswer> => {
      const claim = await deps.hooks.claimSigned(signed);
      if (!claim.isNew) return ignored(DUPLICATE, { ...extra, deploymentId: claim.deploymentId });
      return ignored(reason, extra);
    };

    let payload: unknown;
    try {
      payload = decodeBody(delivery.body, delivery.contentType);
    } catch {
      return skipped('the body is not a JSON push payload');
    }
    const push = pushRequestOf(provider, base.event, payload);
    if (push.kind === 'ignored')
      return skipped(push.reason, {
        ...(push.branch ? { branch: push.branch } : {}),
        ...(push.commit ? { commit: push.commit } : {}),
      });
    const pushed = { branch: push.branch, commit: push.commit };
    if (!isRepositoryMethod(target.deployMethod))
      return skipped(`the service deploys from ${target.deployMethod}, not a git repository`, pushed);
    const notTracked = untracked(target, push);
    if (notTracked !== null) return skipped(notTracked, pushed);

    const result = await deps.hooks.deployPinned({
      serviceId: target.serviceId,
      hookId: target.hookId,
      sourceAddress: delivery.sourceAddress,
      ...base,
      ...pushed,
      bodyDigest: signed.bodyDigest,
      reason: null,
    });
    if (result.kind === 'duplicate')
      return ignored(DUPLICATE, { ...pushed, deploymentId: result.deploymentId });
    if (result.kind === 'stopped') return ignored(STOPPED, pushed);
    await deps.jobs.enqueueDeploy(result.deploymentId);
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
  }

  return {
    async create(principal: Principal, id: string) {
      const service = await visibleOr404(principal, id);
      if (!isRepositoryMethod(service.deployMethod))
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
     * One delivery: the signature first (the secret follows from the hook id, so no database work
     * precedes it), then `admit` charges the right budget; 404 for an unknown hook, 401 for a
     * signature that does not hold (recorded as rejected), else 202 saying what came of it.
     */
    async receive(delivery: IncomingDelivery, admit: AdmitDelivery): Promise<DeliveryAnswer> {
      const meta = deliveryHeaders(delivery.headers);
      const problem = signatureProblem(
        meta.provider,
        delivery.headers,
        delivery.body,
        secretOf(delivery.hookId),
      );
      await admit(problem === null);
      const target = await deps.hooks.findTarget(delivery.hookId);
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
      return answerSigned(target, delivery, meta.provider as Provider, base);
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
