import type { Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { NodeAvailabilityRequest, NodesStore } from '@hostctl/db';
import { toNode } from './nodes.mapper.js';

export type NodesService = ReturnType<typeof createNodesService>;

/**
 * Swarm nodes (RUNTIME=swarm; docs/multi-host.md#nodes-api). Nodes are shared by every customer,
 * so only unscoped admins and operators see or change them: a customer-scoped caller would learn
 * about (and could drain) machines running other customers' services. The API never talks to
 * Docker: it reads the worker's snapshot and records drain/activate for the worker to apply.
 */
export function createNodesService(deps: {
  nodes: NodesStore;
  enqueueAvailability: (nodeId: string) => Promise<void>;
}) {
  function platformWide(principal: Principal): void {
    if (principal.customerId !== null) {
      throw new DomainError(
        'forbidden',
        'nodes are shared by every customer; only users without a customer scope may see or change them',
      );
    }
  }

  return {
    async list(principal: Principal) {
      platformWide(principal);
      return { data: (await deps.nodes.list()).map(toNode) };
    },

    async get(principal: Principal, id: string) {
      platformWide(principal);
      const node = await deps.nodes.find(id);
      if (!node) throw new DomainError('not_found', `node ${id} not found`);
      return toNode(node);
    },

    /** Records the request, then hands it to the worker; the answer shows it as requested. */
    async setAvailability(principal: Principal, id: string, availability: NodeAvailabilityRequest) {
      platformWide(principal);
      const node = await deps.nodes.requestAvailability(id, availability);
      if (!node) throw new DomainError('not_found', `node ${id} not found`);
      await deps.enqueueAvailability(id);
      return toNode(node);
    },
  };
}
