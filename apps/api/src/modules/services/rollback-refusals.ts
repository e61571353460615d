import { DomainError } from '@hostctl/domain';
import { GROUP_CHANGE, type RollbackRefusal } from '@hostctl/db';

/** Names only, never values: the variables may be secrets. */
export function describeChange(changed: readonly string[]): string {
  const groups = changed
    .filter((name) => name.startsWith(GROUP_CHANGE))
    .map((name) => name.slice(GROUP_CHANGE.length));
  const names = changed.filter((name) => name !== 'compose' && !name.startsWith(GROUP_CHANGE));
  const parts = [
    ...(names.length > 0 ? [`variables ${names.join(', ')}`] : []),
    ...(groups.length > 0 ? [`variable groups ${groups.join(', ')}`] : []),
    ...(changed.includes('compose') ? ['compose document'] : []),
  ];
  return parts.join(' and ');
}

/**
 * Why a rollback was refused, as the problem a client can act on: another service's (or an
 * unknown) deployment is not found; everything else is a conflict with the service's history,
 * whose detail names the deployment and what is wrong with it.
 */
export function rollbackRefused(serviceId: string, refusal: RollbackRefusal): DomainError {
  switch (refusal.reason) {
    case 'target_not_found':
      return new DomainError('not_found', `deployment ${refusal.targetId} of service ${serviceId} not found`);
    case 'target_not_succeeded':
      return new DomainError(
        'conflict',
        `deployment ${refusal.targetId} is ${refusal.status}; only a succeeded deployment can be rolled back to`,
      );
    case 'target_without_plan':
      return new DomainError(
        'conflict',
        `deployment ${refusal.targetId} has no stored plan to run again; choose another succeeded deployment`,
      );
    case 'target_is_current':
      return new DomainError(
        'conflict',
        `deployment ${refusal.targetId} is the running release of service ${serviceId}; nothing to roll back`,
      );
    case 'no_release':
      return new DomainError(
        'conflict',
        `service ${serviceId} has no successful deployment yet; there is no release to roll back to`,
      );
    case 'definition_change_needs_manage':
      return new DomainError(
        'forbidden',
        `rolling back to deployment ${refusal.targetId} would change the service's ${describeChange(refusal.changed)}; that needs an API key with the manage action, which this one lacks`,
      );
    case 'no_previous_release':
      return new DomainError(
        'conflict',
        `service ${serviceId} has no successful deployment before its running release ${refusal.currentId}; there is no previous release to roll back to`,
      );
  }
}
