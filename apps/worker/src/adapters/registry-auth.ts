import { ConfigError } from '@hostctl/config';

/**
 * Credentials for the platform registry (REGISTRY_USERNAME / REGISTRY_PASSWORD, or _FILE): the
 * worker pushes with them, lists and deletes what it pushed with them (HTTP Basic), and hands
 * them to Swarm with every service it creates or updates (the X-Registry-Auth header, as
 * `docker service create --with-registry-auth`), so every node can pull without a `docker login`
 * of its own. Never logged, never in a job payload; Swarm stores them with the service on the
 * managers (the service API does not return them).
 */
export interface RegistryAuth {
  username: string;
  password: string;
  /** The registry they are for: Docker sends them to this host only. */
  serveraddress: string;
}

export function registryAuthOf(config: {
  REGISTRY: string;
  REGISTRY_USERNAME: string;
  REGISTRY_PASSWORD: string;
}): RegistryAuth | undefined {
  const { REGISTRY: registry, REGISTRY_USERNAME: username, REGISTRY_PASSWORD: password } = config;
  if (!username && !password) return undefined;
  const problems = [
    ...(!username ? ['REGISTRY_USERNAME: required with REGISTRY_PASSWORD'] : []),
    ...(!password ? ['REGISTRY_PASSWORD: required with REGISTRY_USERNAME'] : []),
    ...(!registry ? ['REGISTRY: required with registry credentials (they are for it)'] : []),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return { username, password, serveraddress: registry };
}

/**
 * The nodes' read-only credentials (REGISTRY_PULL_USERNAME / PASSWORD), for REGISTRY_PULL (else
 * REGISTRY): handed to Swarm with every service instead of the worker's, so what a node holds
 * can pull but neither push nor delete (registry-access.ts checks it). Undefined: none set.
 */
export function nodePullAuthOf(config: {
  REGISTRY: string;
  REGISTRY_PULL: string;
  REGISTRY_PULL_USERNAME: string;
  REGISTRY_PULL_PASSWORD: string;
}): RegistryAuth | undefined {
  const { REGISTRY_PULL_USERNAME: username, REGISTRY_PULL_PASSWORD: password } = config;
  const registry = config.REGISTRY_PULL || config.REGISTRY;
  if (!username && !password) return undefined;
  const problems = [
    ...(!username ? ['REGISTRY_PULL_USERNAME: required with REGISTRY_PULL_PASSWORD'] : []),
    ...(!password ? ['REGISTRY_PULL_PASSWORD: required with REGISTRY_PULL_USERNAME'] : []),
    ...(!registry ? ['REGISTRY: required with registry credentials (they are for it)'] : []),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return { username, password, serveraddress: registry };
}

/** The Authorization header of the registry's HTTP API (Basic: an htpasswd-protected registry). */
export function basicAuthorization(auth: RegistryAuth): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}
