import { createDockerClient } from './docker-client.js';
import { statusOf } from './docker-errors.js';

/** The network Swarm attaches every task to for traffic leaving the overlay (to the host, out). */
export const SWARM_GATEWAY_NETWORK = 'docker_gwbridge';

/**
 * The Linux bridge behind a swarm engine's docker_gwbridge: every Swarm task on that node reaches
 * the host and the outside through it, so the egress policy must cover it like a tenant bridge.
 * Docker names the interface after the network unless an operator created the network with
 * `com.docker.network.bridge.name`. Before the first task Docker has not created the network yet:
 * then its default name, which iptables matches before the interface exists (no window).
 */
export async function swarmGatewayBridge(socketPath: string): Promise<string> {
  const docker = createDockerClient(socketPath);
  try {
    const info = (await docker.getNetwork(SWARM_GATEWAY_NETWORK).inspect()) as {
      Options?: Record<string, string> | null;
    };
    return info.Options?.['com.docker.network.bridge.name'] || SWARM_GATEWAY_NETWORK;
  } catch (error) {
    if (statusOf(error) === 404) return SWARM_GATEWAY_NETWORK;
    throw error;
  }
}
