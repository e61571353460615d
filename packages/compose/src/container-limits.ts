/**
 * What every tenant container gets when its compose says nothing, and the most it may ask for.
 * A container without limits can take the host's memory, CPU and process table from every other
 * tenant, so the parser writes the defaults into the plan (what renderCompose shows is what runs)
 * and refuses requests above the ceilings rather than capping them silently: a service that was
 * given less than it asked for fails later in ways its owner cannot explain.
 */
export interface ContainerLimitPolicy {
  defaultMemoryBytes: number;
  maxMemoryBytes: number;
  defaultNanoCpus: number;
  maxNanoCpus: number;
  defaultPids: number;
  maxPids: number;
  /** SERVICE_MAX_CONTAINERS: most containers (deploy.replicas summed over components) per service. */
  maxContainersPerService: number;
  /**
   * SWARM_PLACEMENT_ALLOWED: the node attributes a tenant may name in deploy.placement. Empty: no
   * placement at all. A constraint picks the nodes a tenant's code runs on, so it is the operator's
   * to open, attribute by attribute (docs/compose-policy.md#placement).
   */
  placementAllowed: readonly string[];
}

const MIB = 1024 * 1024;

/** The operator's settings (CONTAINER_* in packages/config) in the units Docker takes. */
export function containerLimitPolicy(settings: {
  CONTAINER_DEFAULT_MEMORY_MB: number;
  CONTAINER_MAX_MEMORY_MB: number;
  CONTAINER_DEFAULT_CPUS: number;
  CONTAINER_MAX_CPUS: number;
  CONTAINER_DEFAULT_PIDS: number;
  CONTAINER_MAX_PIDS: number;
  SERVICE_MAX_CONTAINERS: number;
  SWARM_PLACEMENT_ALLOWED: string;
}): ContainerLimitPolicy {
  for (const [low, high] of [
    ['CONTAINER_DEFAULT_MEMORY_MB', 'CONTAINER_MAX_MEMORY_MB'],
    ['CONTAINER_DEFAULT_CPUS', 'CONTAINER_MAX_CPUS'],
    ['CONTAINER_DEFAULT_PIDS', 'CONTAINER_MAX_PIDS'],
  ] as const) {
    if (settings[low] > settings[high]) throw new Error(`${low} must not exceed ${high}`);
  }
  return {
    defaultMemoryBytes: settings.CONTAINER_DEFAULT_MEMORY_MB * MIB,
    maxMemoryBytes: settings.CONTAINER_MAX_MEMORY_MB * MIB,
    defaultNanoCpus: Math.round(settings.CONTAINER_DEFAULT_CPUS * 1e9),
    maxNanoCpus: Math.round(settings.CONTAINER_MAX_CPUS * 1e9),
    defaultPids: settings.CONTAINER_DEFAULT_PIDS,
    maxPids: settings.CONTAINER_MAX_PIDS,
    maxContainersPerService: settings.SERVICE_MAX_CONTAINERS,
    placementAllowed: settings.SWARM_PLACEMENT_ALLOWED.split(',')
      .map((attribute) => attribute.trim())
      .filter((attribute) => attribute !== ''),
  };
}

/** The configuration defaults, for callers (tests, tools) that have no configuration. */
export const DEFAULT_CONTAINER_LIMITS: ContainerLimitPolicy = containerLimitPolicy({
  CONTAINER_DEFAULT_MEMORY_MB: 512,
  CONTAINER_MAX_MEMORY_MB: 4096,
  CONTAINER_DEFAULT_CPUS: 1,
  CONTAINER_MAX_CPUS: 2,
  CONTAINER_DEFAULT_PIDS: 512,
  CONTAINER_MAX_PIDS: 4096,
  SERVICE_MAX_CONTAINERS: 20,
  SWARM_PLACEMENT_ALLOWED: '',
});

/**
 * Linux capabilities a tenant container keeps (everything else is dropped). Docker's default set
 * minus NET_RAW (raw sockets: ARP/ICMP spoofing on the shared bridge), MKNOD (device nodes),
 * AUDIT_WRITE, SYS_CHROOT and SETFCAP (file capabilities are void under no-new-privileges anyway). What stays is what images that start as root and then drop
 * privileges need (postgres, mariadb, nginx, wordpress: chown their data, switch user, bind :80).
 */
export const CONTAINER_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'NET_BIND_SERVICE',
] as const;
