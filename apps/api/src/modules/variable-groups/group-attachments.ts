import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import {
  checkAttachment,
  type AttachmentCheck,
  type ServicesStore,
  type VariableGroupsStore,
} from '@hostctl/db';
import type { ServicesService } from '../services/services.service.js';
import { versionMatching } from './if-match.js';
import type { AttachGroupBody, DetachGroupBody } from './variable-groups.schemas.js';

interface GroupAttachmentsDeps {
  groups: Pick<VariableGroupsStore, 'findById' | 'groupIdsOf'>;
  services: Pick<ServicesStore, 'findById'>;
  /** The service's PATCH: the same checks (compose, quotas) and the same redeploy as `variable_groups`. */
  update: ServicesService['update'];
}

export type GroupAttachments = ReturnType<typeof createGroupAttachments>;

/** A concurrent attach or detach moved the service's list (or a group edit its version): compute again. */
const ATTEMPTS = 3;

class AttachmentMoved extends Error {
  constructor(readonly found: AttachmentCheck) {
    super(`the attachment changed meanwhile (${found})`);
  }
}

/**
 * Attaching a group to a service and detaching it (docs/secrets.md#variable-groups), one group at a
 * time, so two concurrent changes of one service's list both land: each is computed from the list
 * it read and written only if that list is still current under the service's row lock (otherwise
 * computed again). `If-Match` names the group's ETag, as its edit does: the group must still be the
 * version the caller looked at (412 otherwise), and it cannot change until the attach commits.
 */
export function createGroupAttachments(deps: GroupAttachmentsDeps) {
  async function change(
    principal: Principal,
    groupId: string,
    serviceId: string,
    ifMatch: string | undefined,
    next: (attached: readonly string[]) => string[],
  ) {
    for (let attempt = 1; ; attempt += 1) {
      const group = await deps.groups.findById(customerScope(principal), groupId);
      if (!group) throw new DomainError('not_found', `variable group ${groupId} not found`);
      const service = await deps.services.findById(customerScope(principal), serviceId);
      if (!service) throw new DomainError('not_found', `service ${serviceId} not found`);
      if (service.customerId !== group.customerId)
        throw new DomainError('validation_failed', `/body/service_id is a service of another customer`, {
          errors: [
            {
              path: '/body/service_id',
              message: `is a service of another customer than variable group ${groupId}`,
            },
          ],
        });
      const version = versionMatching(ifMatch, group.version);
      const attached = await deps.groups.groupIdsOf(serviceId);
      const wanted = next(attached);
      const answer = { version, service_id: serviceId };
      if (wanted.join() === attached.join())
        return { ...answer, variable_groups: attached, deploy_job_id: null };
      try {
        const updated = await deps.update(principal, serviceId, { variable_groups: wanted }, async (tx) => {
          const found = await checkAttachment(tx, { serviceId, groupId, groupVersion: version, attached });
          if (found === 'group_gone')
            throw new DomainError('not_found', `variable group ${groupId} not found`);
          if (found !== 'current') throw new AttachmentMoved(found);
        });
        return { ...answer, variable_groups: updated.variable_groups, deploy_job_id: updated.deploy_job_id };
      } catch (error) {
        if (!(error instanceof AttachmentMoved)) throw error;
        // With If-Match, a changed group is a 412 at the next read (versionMatching).
        if (attempt >= ATTEMPTS)
          throw new DomainError(
            'precondition_failed',
            `service ${serviceId} or variable group ${groupId} kept changing meanwhile; read them again and retry`,
          );
      }
    }
  }

  return {
    /** Into the service's list at `position` (1-based; default last); an attached group moves there. */
    attach: (principal: Principal, groupId: string, body: AttachGroupBody, ifMatch: string | undefined) =>
      change(principal, groupId, body.service_id, ifMatch, (attached) => {
        const others = attached.filter((id) => id !== groupId);
        const at = Math.min(body.position ?? others.length + 1, others.length + 1) - 1;
        return [...others.slice(0, at), groupId, ...others.slice(at)];
      }),

    /** Out of the service's list; nothing changes (and nothing is deployed) when it is not in it. */
    detach: (principal: Principal, groupId: string, body: DetachGroupBody, ifMatch: string | undefined) =>
      change(principal, groupId, body.service_id, ifMatch, (attached) =>
        attached.filter((id) => id !== groupId),
      ),
  };
}
