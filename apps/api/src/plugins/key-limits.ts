import type { FastifyRequest } from 'fastify';
import {
  decideKeyLimits,
  keyRequirement,
  type KeyAction,
  type KeyLimits,
  type KeyTarget,
  type Permission,
  type Principal,
} from '@hostctl/auth-policy';
import type { KeyTargetsStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { routeTarget, type RouteTarget } from './route-target.js';

export type KeyLimitCheck = ReturnType<typeof createKeyLimitCheck>;

/**
 * The deploy-token check (docs/auth.md#deploy-tokens), run by access control after the role check
 * for a principal that came from a limited key. What a route needs comes from its permission (and
 * the action it declares), what it acts on from its path pattern: a route added later is covered
 * without being listed anywhere.
 */
export function createKeyLimitCheck(deps: {
  targets: Pick<KeyTargetsStore, 'serviceOwner' | 'deploymentOwner' | 'runOwner' | 'variableGroupOwner'>;
}) {
  const targetsByPattern = new Map<string, RouteTarget>();
  const targetOf = (pattern: string): RouteTarget => {
    let target = targetsByPattern.get(pattern);
    if (!target) {
      target = routeTarget(pattern);
      targetsByPattern.set(pattern, target);
    }
    return target;
  };

  async function resolve(request: FastifyRequest, limits: KeyLimits): Promise<KeyTarget> {
    const target = targetOf(request.routeOptions.url ?? '');
    if (target.kind === 'collection') return { kind: 'none' };
    if (target.kind === 'other') return { kind: 'other' };
    const id = (request.params as Record<string, string | undefined>)[target.param] ?? '';
    switch (target.type) {
      case 'service':
        return { kind: 'service', id };
      case 'customer':
        return { kind: 'customer', id };
      case 'deployment':
        // A service-limited key needs the deployment's service; only then is it read.
        return limits.serviceId !== null || limits.customerId !== null
          ? { kind: 'deployment', id, owner: await deps.targets.deploymentOwner(id) }
          : { kind: 'deployment', id, owner: null };
      case 'run':
        return limits.serviceId !== null || limits.customerId !== null
          ? { kind: 'run', id, owner: await deps.targets.runOwner(id) }
          : { kind: 'run', id, owner: null };
      case 'variable_group':
        // A service-limited key is refused any group (shared by services); a customer-limited one needs its owner.
        return limits.customerId !== null && limits.serviceId === null
          ? { kind: 'variable_group', id, owner: await deps.targets.variableGroupOwner(id) }
          : { kind: 'variable_group', id, owner: null };
      case 'user':
      case 'api_key':
        return { kind: 'other' };
    }
  }

  return {
    /** Throws 403 naming the limit unless the limited key may call this route. */
    async enforce(
      request: FastifyRequest,
      principal: Principal,
      permission: Permission,
      declared: KeyAction | undefined,
    ): Promise<void> {
      const limits = principal.limits;
      if (!limits) return;
      const target = await resolve(request, limits);
      const needsService =
        limits.serviceId === null && limits.customerId !== null && target.kind === 'service';
      const decision = decideKeyLimits({
        limits,
        permission,
        requirement: keyRequirement(permission, declared),
        target,
        appliesServiceLimit: request.routeOptions.config.appliesServiceLimit === true,
        ...(needsService && target.kind === 'service'
          ? { serviceFacts: await deps.targets.serviceOwner(target.id) }
          : {}),
      });
      if (!decision.allowed) throw new DomainError('forbidden', decision.detail);
    },
  };
}
