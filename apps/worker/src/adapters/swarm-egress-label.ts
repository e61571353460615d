import { createDockerClient } from './docker-client.js';
import { fail } from './docker-errors.js';
import { NODE_ENGINE_TIMEOUT_MS } from './swarm-node-engines.js';
import type { SwarmNodes } from './swarm-nodes.js';

/**
 * Carried by every swarm node whose egress firewall is installed: by the worker once it wrote the
 * rules (its own machine, the nodes of SWARM_NODE_ENGINES), by the operator on a node whose rules
 * it installed by hand (docs/security/egress.md#other-nodes).
 */
export const EGRESS_NODE_LABEL = 'io.hostctl.egress';
const ENFORCED = 'enforced';
/** With EGRESS_POLICY=enforce every Swarm service runs only there: tenant code never runs unprotected. */
export const EGRESS_PLACEMENT = `node.labels.${EGRESS_NODE_LABEL}==${ENFORCED}`;

/** Labels the swarm node of the engine at a socket as protected (through the manager). */
export type EgressNodeMarker = (socketPath: string) => Promise<void>;

export function createEgressNodeMarker(manager: Pick<SwarmNodes, 'setLabel'>): EgressNodeMarker {
  const nodeIds = new Map<string, string>();
  const nodeIdOf = async (socketPath: string): Promise<string> => {
    const known = nodeIds.get(socketPath);
    if (known) return known;
    const info = (await createDockerClient(socketPath, { timeoutMs: NODE_ENGINE_TIMEOUT_MS })
      .info()
      .catch(fail('cannot read the node engine info'))) as { Swarm?: { NodeID?: string } };
    const nodeId = info.Swarm?.NodeID;
    if (!nodeId) throw new Error(`the engine at ${socketPath} is not part of a swarm`);
    nodeIds.set(socketPath, nodeId);
    return nodeId;
  };
  return async (socketPath) => manager.setLabel(await nodeIdOf(socketPath), EGRESS_NODE_LABEL, ENFORCED);
}
