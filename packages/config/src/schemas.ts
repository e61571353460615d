import { Type, type Static } from 'typebox';
import { backupSettings } from './backup-settings.js';
import { scheduleApiSettings, schedulerSettings } from './schedule-settings.js';
import { execApiSettings, execWorkerSettings } from './exec-settings.js';
import { describe } from './describe.js';
import { notificationAttemptSettings } from './notification-settings.js';
import { secretsKeys } from './secrets-keys.js';
import { domainClaimSettings, tlsSettings } from './tls-settings.js';
import { meteringSettings } from './metering-settings.js';
import { releaseWindowSettings } from './release-settings.js';

/** Variables every process needs. */
export const SharedConfigSchema = Type.Object({
  ...secretsKeys,
  NODE_ENV: describe(
    Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
      default: 'development',
    }),
    'Runtime mode; production refuses insecure settings.',
  ),
  DATABASE_URL: describe(Type.String({ minLength: 1 }), 'PostgreSQL connection URL.'),
  REDIS_URL: describe(
    Type.String({ default: 'redis://127.0.0.1:6379' }),
    'Redis URL for queues, sessions and log streams.',
  ),
  LOG_LEVEL: describe(Type.String({ default: 'info' }), 'pino log level.'),
  RUNTIME: describe(
    Type.Union([Type.Literal('docker'), Type.Literal('swarm')], { default: 'docker' }),
    'Where services run: one Docker engine, or a Docker Swarm whose manager DOCKER_SOCKET reaches (docs/multi-host.md).',
  ),
  QUEUE_PREFIX: describe(
    Type.String({ default: 'hostctl' }),
    'Redis key prefix for BullMQ queues; separate installations sharing a Redis use different prefixes.',
  ),
  APPS_DOMAIN: describe(
    Type.String({ default: 'apps.localhost' }),
    'Services are published at http://<name>.<APPS_DOMAIN>.',
  ),
  APPS_SCHEME: describe(
    Type.Union([Type.Literal('http'), Type.Literal('https')], { default: 'http' }),
    'Scheme of the public service URLs.',
  ),
});

// Shared by the API (create-time URL checks) and the worker (fetch-time checks): one definition.
const gitAllowedHosts = describe(
  Type.String({ default: '' }),
  "Comma-separated git hosts allowed to resolve to private or loopback addresses and to use http:// and git://, each host:port or host:from-to (a bare host opens only the scheme's default port). The control plane's own ports are refused regardless.",
);
const registryAllowedHosts = describe(
  Type.String({ default: '' }),
  "Comma-separated image registries allowed to be private or loopback, each host:port or host:from-to (a bare host opens only 443). The control plane's own ports are refused regardless (docs/security/image-policy.md).",
);
const notificationAllowedHosts = describe(
  Type.String({ default: '' }),
  "Comma-separated notification receivers allowed to be private or loopback and to use http://, each host:port or host:from-to (a bare host opens only the scheme's default port). Its own list, not GIT_ALLOWED_HOSTS: a git server the worker may clone from is not a host a tenant may POST to and read answers of. Empty: public https:// receivers only. The control plane's own ports are refused regardless (docs/notifications.md#target-urls).",
);
const backupTargetAllowedHosts = describe(
  Type.String({ default: '' }),
  "Comma-separated endpoints of customers' own backup buckets allowed to be private or loopback and to use http://, each host:port or host:from-to (a bare host opens only the scheme's default port). Empty: public https:// endpoints only. The control plane's own ports are refused regardless (docs/backups.md#a-customers-own-target).",
);
const platformNotificationsCustomer = describe(
  Type.String({ default: '', pattern: '^$|^[0-9a-fA-F-]{36}$' }),
  "The operator's own customer (its id) whose notification subscriptions receive the platform's events (certificate.renewal_failed, certificate.expiring; docs/notifications.md#platform-events). Empty: platform events are logged and on /metrics only; no other customer can subscribe to them.",
);
const platformImages = describe(
  Type.String({ default: '' }),
  "Comma-separated images without a registry host that tenants may run: exact references, repositories (any tag) or * globs (local/*). The template catalog's images are added automatically; any other host-less image is refused.",
);

// Shared by the API (refuses a compose asking above a ceiling at create) and the worker (applies
// the defaults): one definition. See docs/limits.md.
/** One SWARM_NODE_ENGINES entry: a node hostname and the unix socket of its engine. */
const NODE_ENGINE = '[A-Za-z0-9][A-Za-z0-9.-]{0,252}=unix:///[^,=]+';

const containerLimits = {
  CONTAINER_DEFAULT_MEMORY_MB: describe(
    Type.Integer({ default: 512, minimum: 6 }),
    'Memory limit (MiB) of a tenant container whose compose sets none; swap is not allowed on top.',
  ),
  CONTAINER_MAX_MEMORY_MB: describe(
    Type.Integer({ default: 4096, minimum: 6 }),
    'Largest memory limit (MiB) a compose may ask for per container; above it the create request gets 400.',
  ),
  CONTAINER_DEFAULT_CPUS: describe(
    Type.Number({ default: 1, exclusiveMinimum: 0 }),
    'CPU limit (cores, fractions allowed) of a tenant container whose compose sets none.',
  ),
  CONTAINER_MAX_CPUS: describe(
    Type.Number({ default: 2, exclusiveMinimum: 0 }),
    'Largest CPU limit a compose may ask for per container.',
  ),
  CONTAINER_DEFAULT_PIDS: describe(
    Type.Integer({ default: 512, minimum: 1 }),
    'Process/thread limit of a tenant container whose compose sets none (stops fork bombs).',
  ),
  CONTAINER_MAX_PIDS: describe(
    Type.Integer({ default: 4096, minimum: 1 }),
    'Largest process limit a compose may ask for per container.',
  ),
  SERVICE_MAX_CONTAINERS: describe(
    Type.Integer({ default: 20, minimum: 1 }),
    'Most containers one service may run: deploy.replicas (1 when absent) summed over its compose services; above it the compose is refused (400).',
  ),
  SWARM_PLACEMENT_ALLOWED: describe(
    Type.String({ default: '' }),
    'Comma-separated node attributes tenants may name in deploy.placement constraints and spread preferences, each exact (node.labels.zone). Empty: any placement is refused (400). node.role, node.hostname and node.id only when listed; the manager is never a target (docs/compose-policy.md#placement).',
  ),
};

export const ApiConfigSchema = Type.Object({
  ...SharedConfigSchema.properties,
  API_HOST: describe(Type.String({ default: '127.0.0.1' }), 'Address the API listens on.'),
  API_PORT: describe(Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }), 'Port the API listens on.'),
  PUBLIC_URL: describe(
    Type.String({ default: 'http://127.0.0.1:3000' }),
    'External base URL of the API (used for Origin checks and OIDC redirects).',
  ),
  SESSION_SECRET: describe(
    Type.String({ minLength: 32 }),
    'Secret (at least 32 characters) that encrypts the session cookie; the key of the idempotency fingerprints is derived from it (docs/idempotency.md), and push webhook secrets when WEBHOOK_SECRET_KEY is empty.',
  ),
  SESSION_TTL_SECONDS: describe(
    Type.Integer({ default: 86400, minimum: 1 }),
    'Idle time to live of a session; reset on each use.',
  ),
  COOKIE_SECURE: describe(
    Type.Boolean({ default: true }),
    'Set the Secure attribute on the session cookie (keep true outside tests).',
  ),
  ...scheduleApiSettings,
  ...execApiSettings,
  DOMAIN_VERIFICATION_RESOLVER: describe(
    Type.String({ default: '', pattern: '^$|^[0-9A-Fa-f.:\\[\\]]+(,[0-9A-Fa-f.:\\[\\]]+)*$' }),
    "Comma-separated DNS servers (IP or IP:port) that custom-domain ownership checks ask (docs/tls.md#custom-domains). Empty: the system's resolvers. The dev stack and the tests point it at the stack's PowerDNS (127.0.0.1:5300).",
  ),
  ...domainClaimSettings,
  OIDC_ISSUER: describe(Type.String({ default: 'http://127.0.0.1:3100' }), 'OpenID Connect issuer URL.'),
  OIDC_CLIENT_ID: describe(Type.String({ default: 'hostctl-dashboard' }), 'OIDC client id.'),
  OIDC_CLIENT_SECRET: describe(Type.String({ default: '' }), 'OIDC client secret.'),
  OIDC_REDIRECT_URI: describe(
    Type.String({ default: '' }),
    'Redirect URI registered at the provider; defaults to PUBLIC_URL + /api/auth/callback.',
  ),
  OIDC_UNKNOWN_USERS: describe(
    Type.Union([Type.Literal('reject'), Type.Literal('viewer')], { default: 'reject' }),
    'What happens when someone not provisioned signs in.',
  ),
  OIDC_POST_LOGOUT_REDIRECT_URI: describe(
    Type.String({ default: '' }),
    'Where the provider sends the browser after sign-out (must be registered there); defaults to PUBLIC_URL + /.',
  ),
  LIFECYCLE_WAIT_MS: describe(
    Type.Integer({ default: 30000, minimum: 100 }),
    'How long start/stop/restart requests wait for the worker before answering with the known status.',
  ),
  STREAM_RECHECK_MS: describe(
    Type.Integer({ default: 5000, minimum: 50, maximum: 60000 }),
    'How often an open deployment or log WebSocket re-checks its credential, role and scope; the longest a revoked key, logout, role or customer change keeps a stream open.',
  ),
  WEBHOOK_SECRET_KEY: describe(
    Type.String({ default: '' }),
    "Server key (at least 32 characters) the push webhooks' signing secrets are derived from (docs/webhooks.md); changing it invalidates every hook's secret. Empty: derived from SESSION_SECRET.",
  ),
  NOTIFY_REDELIVER_INTERVAL_MS: describe(
    Type.Integer({ default: 60000, minimum: 0 }),
    'Least time between two redeliveries of one notification delivery (429 sooner); a redelivery is refused with 409 while an attempt of it is in flight (docs/notifications.md#fairness).',
  ),
  NOTIFY_REDELIVER_PER_MINUTE: describe(
    Type.Integer({ default: 10, minimum: 1 }),
    'Redeliveries one customer may ask for per minute, over all its deliveries (429 beyond).',
  ),
  WEBHOOK_RATE_LIMIT_PER_MINUTE: describe(
    Type.Integer({ default: 60, minimum: 1 }),
    "Push webhook deliveries accepted per minute per hook (ten times that per source address); posts whose signature fails count apart, on a budget of the same size, so they never spend the forge's (docs/webhooks.md).",
  ),
  AUDIT_RETENTION_DAYS: describe(
    Type.Integer({ default: 90, minimum: 1, maximum: 36500 }),
    'How many days audit events are kept; an hourly job in each API process deletes older ones (docs/audit.md). The table refuses deleting events younger than a day.',
  ),
  RATE_LIMIT_PER_MINUTE: describe(
    Type.Integer({ default: 600, minimum: 1 }),
    'Requests per minute per credential or IP.',
  ),
  RATE_LIMIT_LOGIN_PER_MINUTE: describe(
    Type.Integer({ default: 30, minimum: 1 }),
    'Requests per minute per IP to /api/auth/login and /api/auth/callback.',
  ),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: describe(
    Type.Integer({ default: 60, minimum: 1 }),
    'Failed API-key authentications per minute per IP before further key requests get 429.',
  ),
  TRUST_PROXY: describe(
    Type.Boolean({ default: false }),
    'Trust X-Forwarded-* headers from a reverse proxy.',
  ),
  DASHBOARD_DIR: describe(
    Type.String({ default: '' }),
    'Built web dashboard served at / (empty: apps/web/dist of this checkout). Without it / answers that the dashboard is not built.',
  ),
  GIT_ALLOWED_HOSTS: gitAllowedHosts,
  NOTIFICATION_ALLOWED_HOSTS: notificationAllowedHosts,
  BACKUP_TARGET_ALLOWED_HOSTS: backupTargetAllowedHosts,
  PLATFORM_NOTIFICATIONS_CUSTOMER_ID: platformNotificationsCustomer,
  ...containerLimits,
  REGISTRY_ALLOWED_HOSTS: registryAllowedHosts,
  PLATFORM_IMAGES: platformImages,
});
export type ApiConfig = Static<typeof ApiConfigSchema>;

export const WorkerConfigSchema = Type.Object({
  ...SharedConfigSchema.properties,
  WORKER_CONCURRENCY: describe(
    Type.Integer({ default: 4, minimum: 1, maximum: 64 }),
    'Jobs one worker process runs at once.',
  ),
  WORKER_HEALTH_HOST: describe(
    Type.String({ default: '127.0.0.1' }),
    'Address of the worker /livez, /readyz and /metrics endpoints (0.0.0.0 to scrape from another host).',
  ),
  WORKER_HEALTH_PORT: describe(
    Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
    'Port of the worker /livez and /readyz endpoints (0: random).',
  ),
  DOCKER_SOCKET: describe(Type.String({ default: '/var/run/docker.sock' }), 'Docker engine socket.'),
  SWARM_DOCKER_HOST: describe(
    Type.String({ default: '', pattern: '^(unix:///.+)?$' }),
    'unix:// socket of the swarm manager engine when RUNTIME=swarm (empty: DOCKER_SOCKET). Images are pulled and built on DOCKER_SOCKET, then pushed to REGISTRY for the nodes.',
  ),
  SWARM_NODE_ENGINES: describe(
    Type.String({ default: '', pattern: `^(${NODE_ENGINE}(,${NODE_ENGINE})*)?$` }),
    'RUNTIME=swarm: the engines of nodes other than the manager, as `<node hostname>=unix:///<socket>` pairs separated by commas (a socket forwarded over SSH, for instance). The observers read CPU, memory, disk usage and health output of tasks there, and terminals open in tasks there; a node not listed shows no usage and refuses terminals (docs/multi-host.md#usage-of-tasks-on-other-nodes).',
  ),
  SWARM_PROXY_SOURCES: describe(
    Type.String({ default: '' }),
    "RUNTIME=swarm with EGRESS_POLICY=enforce: IPv4 addresses or CIDR ranges, comma-separated, allowed to dial the ports web tasks publish on their nodes: the proxy's and the worker's addresses as the other nodes see them. Connections from anywhere else are dropped on the worker's machine and the nodes of SWARM_NODE_ENGINES. Empty: the ports are open to every address, as Docker leaves them (docs/multi-host.md#published-task-ports).",
  ),
  SWARM_OVERLAY_ENCRYPTION: describe(
    Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'off' }),
    "RUNTIME=swarm: `on` creates each service's overlay network with Docker's `encrypted` option (IPsec ESP, AES-GCM, between nodes). Every node's kernel must have ESP and GCM (CONFIG_INET_ESP, CONFIG_CRYPTO_GCM): without them Docker cannot install the security associations and traffic between tasks on different nodes is silently lost. Off by default because the kernel of the machines hostctl is developed on lacks both (docs/security/egress.md#overlay-encryption); the egress firewall refuses VXLAN (4789/udp) from tasks either way.",
  ),
  SWARM_NODE_COMMAND_IMAGE: describe(
    Type.String({ default: 'busybox:1.36', minLength: 1 }),
    "RUNTIME=swarm with EGRESS_POLICY=enforce: the image the worker runs on each node of SWARM_NODE_ENGINES (host network, CAP_NET_ADMIN, the node's root filesystem read-only) to install the egress firewall with the node's own iptables; only its `chroot` (busybox) is used. Pulled on a node that lacks it (docs/security/egress.md#other-nodes).",
  ),
  REGISTRY: describe(
    Type.String({ default: '', pattern: '^([a-z0-9.-]+(:[0-9]{1,5})?)?$' }),
    'host[:port] of the platform registry. RUNTIME=swarm pushes every image of a plan there and runs it by digest, so every node pulls the same image (docs/multi-host.md). Empty: nothing is pushed; nodes must pull the references as written.',
  ),
  REGISTRY_USERNAME: describe(
    Type.String({ default: '' }),
    'User of the platform registry (htpasswd / HTTP Basic), with REGISTRY_PASSWORD. The worker pushes, lists and deletes with it and passes it to Swarm with each service, so nodes pull without logging in (docs/multi-host.md). Empty: anonymous.',
  ),
  REGISTRY_PASSWORD: describe(
    Type.String({ default: '' }),
    'Password of REGISTRY_USERNAME (or REGISTRY_PASSWORD_FILE). Never logged.',
  ),
  REGISTRY_PULL: describe(
    Type.String({ default: '', pattern: '^([a-z0-9.-]+(:[0-9]{1,5})?)?$' }),
    'host[:port] the nodes pull the pushed images from, when it is not REGISTRY: a read-only registry serving the same storage (docs/multi-host.md#images-and-the-registry). Empty: REGISTRY.',
  ),
  REGISTRY_PULL_USERNAME: describe(
    Type.String({ default: '' }),
    'RUNTIME=swarm: the read-only user of the platform registry the nodes pull with (handed to Swarm with each service instead of REGISTRY_USERNAME), with REGISTRY_PULL_PASSWORD. Required, with REGISTRY_USERNAME, once the swarm has more than one node: the worker refuses to push to a registry that answers anonymous reads or lets these credentials push. Empty: nodes pull with REGISTRY_USERNAME.',
  ),
  REGISTRY_PULL_PASSWORD: describe(
    Type.String({ default: '' }),
    'Password of REGISTRY_PULL_USERNAME (or REGISTRY_PULL_PASSWORD_FILE). Never logged.',
  ),
  RECONCILE_INTERVAL_MS: describe(Type.Integer({ default: 15000, minimum: 1000 }), 'Reconciler period.'),
  NODES_INTERVAL_MS: describe(
    Type.Integer({ default: 5000, minimum: 500 }),
    'RUNTIME=swarm: period of the snapshot of nodes and tasks the nodes API and service placement read.',
  ),
  ...notificationAttemptSettings,
  DEPLOY_CUSTOMER_CONCURRENCY: describe(
    Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
    "Deployments one customer may run at once, across every worker: a job past it steps back in the queue so that another customer's deployment takes the slot, and one customer's flood of deploys cannot starve the others (docs/quotas.md#fair-queues). Builds count too; a customer's concurrent_builds quota bounds its builds within this share (docs/quotas.md#builds).",
  ),
  NOTIFY_CUSTOMER_CONCURRENCY: describe(
    Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
    "Notification attempts one customer may have in flight at a time, across every worker: a customer's slow receiver delays that customer's deliveries, not the others' (docs/notifications.md#fairness).",
  ),
  NOTIFY_SHOW_RESPONSE_BODY: describe(
    Type.Boolean({ default: false }),
    "Keep the first 1 KiB of a receiver's answer as the delivery's last_response, which the tenant reads. Off: only the status code is kept, so a target cannot be used to read what an internal endpoint answers (docs/notifications.md#target-urls).",
  ),
  ...schedulerSettings,
  ...execWorkerSettings,
  NOTIFY_RELAY_INTERVAL_MS: describe(
    Type.Integer({ default: 2000, minimum: 100 }),
    'How often the worker enqueues the notification deliveries that are due (the outbox relay; it also re-enqueues jobs lost with Redis).',
  ),
  HEALTH_INTERVAL_MS: describe(
    Type.Integer({ default: 15000, minimum: 1000 }),
    'Period of the health checks of running services (docs/health-and-resources.md).',
  ),
  RESOURCE_INTERVAL_MS: describe(
    Type.Integer({ default: 30000, minimum: 1000 }),
    'Period of the CPU, memory and storage sampling of services.',
  ),
  DEPLOY_TIMEOUT_MS: describe(
    Type.Integer({ default: 600000, minimum: 1000 }),
    'Upper bound of one deployment.',
  ),
  ...releaseWindowSettings,
  RELEASES_KEPT: describe(
    Type.Integer({ default: 5, minimum: 1 }),
    'Built images (git/ai) of this many latest successful releases per service are kept for rollback; older ones are removed.',
  ),
  ...tlsSettings,
  ...meteringSettings,
  CADDY_ADMIN_URL: describe(Type.String({ default: '' }), 'Caddy admin API; empty disables routing.'),
  DNS_PROVIDER: describe(
    Type.Union([Type.Literal('none'), Type.Literal('powerdns')], { default: 'none' }),
    'DNS provider for service records.',
  ),
  PDNS_API_URL: describe(Type.String({ default: 'http://127.0.0.1:8081' }), 'PowerDNS HTTP API base URL.'),
  PDNS_API_KEY: describe(Type.String({ default: '' }), 'PowerDNS API key.'),
  PDNS_ZONE: describe(
    Type.String({ default: '' }),
    'Zone holding service records (defaults to APPS_DOMAIN).',
  ),
  PUBLIC_IP: describe(Type.String({ default: '127.0.0.1' }), 'Address the A records of services point at.'),
  GIT_ALLOWED_HOSTS: gitAllowedHosts,
  NOTIFICATION_ALLOWED_HOSTS: notificationAllowedHosts,
  BACKUP_TARGET_ALLOWED_HOSTS: backupTargetAllowedHosts,
  PLATFORM_NOTIFICATIONS_CUSTOMER_ID: platformNotificationsCustomer,
  REGISTRY_ALLOWED_HOSTS: registryAllowedHosts,
  PLATFORM_IMAGES: platformImages,
  GIT_CLONE_TIMEOUT_MS: describe(
    Type.Integer({ default: 120000, minimum: 1000 }),
    'Upper bound of resolving and cloning one repository (git/ai deploys).',
  ),
  GIT_MAX_REPO_MB: describe(
    Type.Integer({ default: 500, minimum: 1 }),
    'Largest repository checkout (pack plus working tree) a git/ai deploy accepts.',
  ),
  CADDY_SERVER_NAME: describe(
    Type.String({ default: 'hostctl' }),
    'Caddy HTTP server (apps.http.servers.<name>) the service routes are inserted into.',
  ),
  AI_BASE_IMAGE_NODE: describe(
    Type.String({ default: 'node:20-slim' }),
    'Base image of Dockerfiles the ai analyzer generates for Node.js repositories.',
  ),
  AI_BASE_IMAGE_PYTHON: describe(
    Type.String({ default: 'python:3.12-slim' }),
    'Base image of generated Dockerfiles for Python repositories.',
  ),
  AI_BASE_IMAGE_GO: describe(
    Type.String({ default: 'golang:1.22' }),
    'Build stage image of generated Dockerfiles for Go repositories.',
  ),
  AI_BASE_IMAGE_GO_RUNTIME: describe(
    Type.String({ default: 'gcr.io/distroless/static-debian12' }),
    'Runtime stage image of generated Dockerfiles for Go repositories.',
  ),
  AI_BASE_IMAGE_STATIC: describe(
    Type.String({ default: 'busybox:1.36' }),
    'Base image (with busybox httpd) of generated Dockerfiles for static sites.',
  ),
  AI_PLANNER_URL: describe(
    Type.String({ default: '' }),
    'OpenAI-compatible API base URL (e.g. https://api.openai.com/v1) of the optional LLM deploy planner; empty disables it.',
  ),
  AI_PLANNER_MODEL: describe(Type.String({ default: '' }), 'Model name sent to the LLM planner.'),
  AI_PLANNER_API_KEY: describe(Type.String({ default: '' }), 'Bearer token for the LLM planner endpoint.'),
  AI_PLANNER_TIMEOUT_MS: describe(
    Type.Integer({ default: 30000, minimum: 1000 }),
    'Upper bound of one LLM planner request; on timeout the deterministic analyzer decides.',
  ),
  ...containerLimits,
  EGRESS_POLICY: describe(
    Type.Union([Type.Literal('enforce'), Type.Literal('off')], { default: 'enforce' }),
    'enforce: the worker installs iptables rules so service and build containers cannot reach the host or 169.254.0.0/16 (needs iptables, CAP_NET_ADMIN and the host network namespace; production must run it). off: only where the host firewall does the same (docs/security/egress.md).',
  ),
  EGRESS_DENY_CIDRS: describe(
    Type.String({ default: '' }),
    'Comma-separated extra IPv4 addresses or CIDR ranges tenant containers may not reach (e.g. the internal network of the control plane).',
  ),
  ...backupSettings,
});
export type WorkerConfig = Static<typeof WorkerConfigSchema>;

export const CliConfigSchema = Type.Object({
  DATABASE_URL: SharedConfigSchema.properties.DATABASE_URL,
});
export type CliConfig = Static<typeof CliConfigSchema>;

/** `hostctl secrets …`: the operator commands that seal and re-wrap what is at rest. */
export const SecretsCliConfigSchema = Type.Object({
  DATABASE_URL: SharedConfigSchema.properties.DATABASE_URL,
  ...secretsKeys,
});
export type SecretsCliConfig = Static<typeof SecretsCliConfigSchema>;
