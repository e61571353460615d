import { DomainError } from '@hostctl/domain';
import { createImageRegistry, type RegistryProbe } from '../adapters/image-registry.js';
import { nodePullAuthOf, registryAuthOf, type RegistryAuth } from '../adapters/registry-auth.js';

/**
 * The platform registry holds every tenant's images. On one node nothing but that node's engine
 * pulls from it, and the dev stack's anonymous registry on loopback is fine. Once the swarm has
 * more than one node, the registry listens where other machines reach it, and so may tasks on
 * them (docs/security/egress.md): it must refuse anonymous reads and writes, the worker must push
 * and delete with its own credentials (REGISTRY_USERNAME), and nodes pull with credentials that
 * can read only (REGISTRY_PULL_USERNAME, on REGISTRY_PULL). Checked before each push for the nodes
 * (image-distribution.ts): a registry that fails is named, and nothing is pushed to it.
 */
export interface RegistryAccess {
  /** Throws image_unavailable naming every problem when the swarm has more than one node. */
  assertProtected(): Promise<void>;
}

interface RegistryAccessOptions {
  /** REGISTRY: where the worker pushes and deletes. */
  registry: string;
  /** REGISTRY_PULL (default REGISTRY): where nodes pull. */
  pullRegistry: string;
  /** REGISTRY_USERNAME / PASSWORD. */
  auth?: RegistryAuth;
  /** REGISTRY_PULL_USERNAME / PASSWORD. */
  pullAuth?: RegistryAuth;
  /** How many nodes the swarm has now (the manager's nodes API). */
  nodeCount: () => Promise<number>;
  /** A registry client (tests: the same adapter). */
  connect?: (options: { registry: string; auth?: RegistryAuth }) => RegistryProbe;
}

export function createRegistryAccess(options: RegistryAccessOptions): RegistryAccess {
  const connect = options.connect ?? createImageRegistry;
  const endpoints = [...new Set([options.registry, options.pullRegistry])];
  return {
    async assertProtected() {
      const nodes = await options.nodeCount();
      if (nodes <= 1) return;
      const problems: string[] = [];
      if (!options.auth)
        problems.push('the worker has no credentials for it (REGISTRY_USERNAME, REGISTRY_PASSWORD)');
      if (!options.pullAuth)
        problems.push(
          'the nodes have no read-only credentials (REGISTRY_PULL_USERNAME, REGISTRY_PULL_PASSWORD)',
        );
      for (const registry of endpoints) {
        const anonymous = connect({ registry });
        if (await anonymous.letsRead()) problems.push(`${registry} answers anonymous reads`);
        if (await anonymous.letsPush()) problems.push(`${registry} accepts anonymous pushes`);
        if (options.pullAuth && (await connect({ registry, auth: options.pullAuth }).letsPush()))
          problems.push(`${registry} accepts pushes with the nodes' pull credentials`);
      }
      if (problems.length > 0)
        throw new DomainError(
          'image_unavailable',
          `the swarm has ${nodes} nodes and the platform registry is not protected: ${problems.join('; ')}. Nothing was pushed (docs/multi-host.md#images-and-the-registry).`,
        );
    },
  };
}

/**
 * The Swarm driver's registry (runtime/swarm/swarm-driver.ts, wired in runtime-wiring.ts): where to push, with
 * which credentials, where the nodes pull, and the check before each push. Nothing without REGISTRY.
 */
export function swarmRegistryDeps(
  config: {
    REGISTRY: string;
    REGISTRY_USERNAME: string;
    REGISTRY_PASSWORD: string;
    REGISTRY_PULL: string;
    REGISTRY_PULL_USERNAME: string;
    REGISTRY_PULL_PASSWORD: string;
  },
  nodeCount: () => Promise<number>,
) {
  if (!config.REGISTRY) return {};
  const auth = registryAuthOf(config);
  const pullAuth = nodePullAuthOf(config);
  const pullRegistry = config.REGISTRY_PULL || config.REGISTRY;
  return {
    registry: config.REGISTRY,
    ...(auth ? { registryAuth: auth } : {}),
    pullRegistry,
    access: createRegistryAccess({
      registry: config.REGISTRY,
      pullRegistry,
      ...(auth ? { auth } : {}),
      ...(pullAuth ? { pullAuth } : {}),
      nodeCount,
    }),
  };
}
