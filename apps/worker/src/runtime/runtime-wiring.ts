import type { WorkerConfig } from '@hostctl/config';
import type { AdvisoryLocks, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { createContainerExec } from '../adapters/container-exec.js';
import { createDockerClient } from '../adapters/docker-client.js';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import { createImageRegistry, type ImageRegistry } from '../adapters/image-registry.js';
import { nodePullAuthOf, registryAuthOf } from '../adapters/registry-auth.js';
import { createEgressNodeMarker, EGRESS_PLACEMENT } from '../adapters/swarm-egress-label.js';
import { swarmGatewayBridge } from '../adapters/swarm-gateway.js';
import { swarmMemberAddresses, swarmNodeCount } from '../adapters/swarm-members.js';
import { createSwarmJobs } from '../adapters/swarm-jobs.js';
import { createSwarmLifecycle } from '../adapters/swarm-lifecycle.js';
import { createNodeEngines, parseNodeEngines, type NodeEngines } from '../adapters/swarm-node-engines.js';
import { createSwarmNodes } from '../adapters/swarm-nodes.js';
import { createSwarmRestarts } from '../adapters/swarm-restarts.js';
import { createSwarmRuntime } from '../adapters/swarm-runtime.js';
import { createSwarmStandby } from '../adapters/swarm-standby.js';
import { createSwarmTerminals } from '../adapters/swarm-terminals.js';
import { createSwarmObservation } from '../adapters/swarm-telemetry.js';
import { createSwarmUpdates } from '../adapters/swarm-updates.js';
import { createTerminalExec } from '../adapters/terminal-exec.js';
import type { EgressReach } from '../egress/worker-egress.js';
import { createUpdateRouteFollower } from '../network/update-route-follower.js';
import { swarmRegistryDeps } from '../release/registry-access.js';
import type { ReleaseDeps } from '../release/release-engine.js';
import { TASK_FOLLOW_MS } from '../release/swarm-release.js';
import { createDockerDriver } from './docker/docker-driver.js';
import type { RuntimeDriver } from './driver.js';
import { createSwarmDriver } from './swarm/swarm-driver.js';

export interface RuntimeWiring {
  driver: RuntimeDriver;
  /** Where the driver pushes each release's images for the nodes (Swarm with REGISTRY): pruned and removed with them. */
  registryImages?: ImageRegistry;
  /**
   * Runs on every replica beside the reconciler (Swarm: routes services Swarm updates when no job
   * follows them, so a worker dying mid-release leaves no stale route).
   */
  updateFollower?: { start(): void; stop(): Promise<void> };
  /** Where tenant code runs beyond this engine's networks, for the egress firewall (Swarm: members, nodes). */
  egressReach?: EgressReach;
}

/**
 * The one place the worker picks its runtime from RUNTIME: the single engine's driver or the
 * Swarm driver, and only what the chosen one uses is built. `release` is the release engine's
 * settings (the image engine, the router, the instance, readiness, RELEASE_*_MS).
 */
export function createRuntimeWiring(
  config: WorkerConfig,
  deps: {
    release: ReleaseDeps;
    /** The swarm manager's socket (SWARM_DOCKER_HOST, else DOCKER_SOCKET). */
    managerSocket: string;
    services: Pick<WorkerServiceStore, 'findById'>;
    locks: AdvisoryLocks;
    logger: Logger;
  },
): RuntimeWiring {
  const { release } = deps;
  if (config.RUNTIME !== 'swarm')
    return {
      driver: createDockerDriver({
        ...release,
        telemetry: createDockerTelemetry({ socketPath: config.DOCKER_SOCKET }),
        exec: createContainerExec({ socketPath: config.DOCKER_SOCKET }),
        terminal: createTerminalExec({ socketPath: config.DOCKER_SOCKET }),
      }),
    };

  // Releases run as Swarm services on the manager; images are pulled and built on DOCKER_SOCKET,
  // then pushed to REGISTRY for the nodes.
  const { managerSocket, logger } = deps;
  const managerDocker = createDockerClient(managerSocket);
  const registryAuth = registryAuthOf(config);
  // Every write of a Swarm service carries the registry credentials its tasks pull with: the
  // nodes' read-only ones when set (REGISTRY_PULL_USERNAME), never more than they need.
  const nodeAuth = nodePullAuthOf(config) ?? registryAuth;
  const swarmOptions = {
    socketPath: managerSocket,
    instance: release.instance,
    timeoutMs: release.readiness.timeoutMs,
    ...(nodeAuth ? { registryAuth: nodeAuth } : {}),
  };
  const tenantPlacement = {
    encryptOverlays: config.SWARM_OVERLAY_ENCRYPTION === 'on',
    // Tenant code runs only on nodes whose egress firewall is in (worker-egress.ts).
    ...(config.EGRESS_POLICY === 'enforce' ? { platformConstraints: [EGRESS_PLACEMENT] } : {}),
  };
  const services = createSwarmRuntime({
    ...swarmOptions,
    ...tenantPlacement,
    // Swarm watches after the switch what the single engine watches before it and during
    // its drain: a release that fails within the whole window is rolled back under both.
    monitorMs: config.RELEASE_STABILIZATION_MS + config.RELEASE_DRAIN_MS,
  });
  // The other nodes' engines (SWARM_NODE_ENGINES), for their tasks' usage, terminals and the egress firewall there.
  const nodeEngineSockets = parseNodeEngines(config.SWARM_NODE_ENGINES);
  const nodeEngines: NodeEngines = createNodeEngines(nodeEngineSockets);
  const driver = createSwarmDriver({
    engine: release,
    services,
    lifecycle: createSwarmLifecycle(swarmOptions),
    restarts: createSwarmRestarts(managerDocker, release.instance, nodeAuth),
    standby: createSwarmStandby(managerDocker, swarmOptions),
    distribution: swarmRegistryDeps(config, () => swarmNodeCount(managerSocket)),
    observed: createSwarmObservation({ socketPath: managerSocket, nodeEngines }),
    // Runs and release commands: on the same nodes, overlay and egress placement as the services.
    jobs: createSwarmJobs(managerDocker, { ...swarmOptions, ...tenantPlacement }),
    terminals: createSwarmTerminals({
      docker: managerDocker,
      managerSocket,
      instance: release.instance,
      nodeSockets: nodeEngineSockets,
    }),
  });
  return {
    driver,
    ...(config.REGISTRY
      ? {
          registryImages: createImageRegistry({
            registry: config.REGISTRY,
            ...(registryAuth ? { auth: registryAuth } : {}),
          }),
        }
      : {}),
    egressReach: {
      // Swarm tasks reach the host and the outside through the manager's gateway bridge.
      bridges: async () => [await swarmGatewayBridge(managerSocket)],
      memberAddresses: () => swarmMemberAddresses(managerSocket),
      nodeSockets: nodeEngineSockets,
      markNode: createEgressNodeMarker(createSwarmNodes(managerDocker, release.instance)),
      ownSocket: managerSocket,
    },
    updateFollower: createUpdateRouteFollower({
      updates: createSwarmUpdates(managerDocker, release.instance),
      serviceRuntime: services,
      router: release.router,
      services: deps.services,
      locks: deps.locks,
      intervalMs: TASK_FOLLOW_MS,
      logger,
    }),
  };
}
