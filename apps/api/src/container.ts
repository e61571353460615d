import { containerLimitPolicy } from '@hostctl/compose';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { ApiConfig } from '@hostctl/config';
import {
  createAuditStore,
  createCustomDomainsStore,
  createCustomersStore,
  createTlsCertificatesStore,
  createDeploymentsStore,
  createRunsStore,
  createExecSessionsStore,
  createSchedulesStore,
  createDatabase,
  keyringFromSettings,
  createEventsStore,
  createIdentityStore,
  createKeyTargetsStore,
  createNodesStore,
  createNotificationsStore,
  createQuotasStore,
  createUsageStore,
  createServiceMetricsStore,
  createBackupsStore,
  createBackupCloneStore,
  createBackupSchedulesStore,
  createCustomerBackupTargetsStore,
  createServicesStore,
  createVariableGroupsStore,
  createUsersStore,
  createWebhooksStore,
  type Db,
} from '@hostctl/db';
import { createProducer, createRedis, deploymentChannel, type Producer } from '@hostctl/queue';
import { sourcePolicyOf } from '@hostctl/source-policy';
import { createAuthenticator } from './auth/authenticator.js';
import { createAuthModule } from './modules/auth/auth.module.js';
import { registerAdminRoutes } from './modules/admin/admin.routes.js';
import { createAdminService } from './modules/admin/admin.service.js';
import { registerDashboardRoutes } from './modules/dashboard/dashboard.routes.js';
import { registerHealthRoutes } from './modules/health/health.routes.js';
import { registerServiceRoutes } from './modules/services/services.routes.js';
import { registerVariableGroupRoutes } from './modules/variable-groups/variable-groups.routes.js';
import { createVariableGroupsService } from './modules/variable-groups/variable-groups.service.js';
import { createGroupAttachments } from './modules/variable-groups/group-attachments.js';
import { createServicesService } from './modules/services/services.service.js';
import { catalogImages, loadCatalog } from '@hostctl/templates';
import { registerTemplateRoutes } from './modules/templates/templates.routes.js';
import { createChangeNotifier } from './live/change-notifier.js';
import { createLogReader } from './live/log-reader.js';
import { createRunOutputReader } from './live/run-output-reader.js';
import { createStreamGuard } from './live/stream-guard.js';
import { registerDeploymentRoutes } from './modules/deployments/deployments.routes.js';
import { createDeploymentsService } from './modules/deployments/deployments.service.js';
import { registerLogRoutes } from './modules/logs/logs.routes.js';
import { createLogsService } from './modules/logs/logs.service.js';
import { createJobQueue, type JobQueue } from './queue-client.js';
import { fingerprintKey, registerIdempotency } from './plugins/idempotency.js';
import { createApiMetrics, registerMetrics } from './plugins/metrics.js';
import { createKeyLimitCheck, type KeyLimitCheck } from './plugins/key-limits.js';
import {
  createAuditRecorder,
  startAuditRetention,
  type AuditRecorder,
} from './modules/audit/audit-recorder.js';
import { registerAuditRoutes } from './modules/audit/audit.routes.js';
import { registerNodeRoutes } from './modules/nodes/nodes.routes.js';
import { createNodesService } from './modules/nodes/nodes.service.js';
import { toPlacement } from './modules/nodes/nodes.mapper.js';
import { createAuditService } from './modules/audit/audit.service.js';
import { createRunOutputService } from './modules/runs/run-output.service.js';
import { registerRunRoutes } from './modules/runs/runs.routes.js';
import { createExecBounds } from './modules/exec/exec-bounds.js';
import { registerExecRoutes } from './modules/exec/exec.routes.js';
import { createExecService } from './modules/exec/exec.service.js';
import { createExecRelay } from './live/exec-relay.js';
import { createRunsService } from './modules/runs/runs.service.js';
import { registerScheduleRoutes } from './modules/schedules/schedules.routes.js';
import { createSchedulesService } from './modules/schedules/schedules.service.js';
import { registerBackupRoutes } from './modules/backups/backups.routes.js';
import { createBackupsService } from './modules/backups/backups.service.js';
import { createBackupClone } from './modules/backups/backup-clone.js';
import { registerBackupScheduleRoutes } from './modules/backups/backup-schedule.routes.js';
import { createBackupScheduleService } from './modules/backups/backup-schedule.service.js';
import { registerBackupTargetRoutes } from './modules/backups/backup-target.routes.js';
import { createBackupTargetService } from './modules/backups/backup-target.service.js';
import { registerNotificationRoutes } from './modules/notifications/notifications.routes.js';
import { createNotificationsService } from './modules/notifications/notifications.service.js';
import { registerQuotaRoutes } from './modules/quotas/quotas.routes.js';
import { createQuotasService } from './modules/quotas/quotas.service.js';
import { registerServiceMetricsRoutes } from './modules/service-metrics/service-metrics.routes.js';
import { createServiceMetricsService } from './modules/service-metrics/service-metrics.service.js';
import { registerUsageRoutes } from './modules/usage/usage.routes.js';
import { createUsageService } from './modules/usage/usage.service.js';
import { registerWebhookReceiver, registerWebhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { createWebhooksService, webhookSecretKey } from './modules/webhooks/webhooks.service.js';
import { registerCertificateRoutes } from './modules/certificates/certificates.routes.js';
import { registerCustomDomainRoutes } from './modules/custom-domains/custom-domains.routes.js';
import { createCustomDomainsService } from './modules/custom-domains/custom-domains.service.js';
import { createDomainVerifier } from './modules/custom-domains/domain-verifier.js';

export interface Container {
  config: ApiConfig;
  db: Db;
  redis: Redis;
  producer: Producer;
  jobs: JobQueue;
  authenticator: ReturnType<typeof createAuthenticator>;
  /** The deploy-token check access control runs for limited keys. */
  keyLimits: KeyLimitCheck;
  /** Where the audit plugin writes its events. */
  audit: AuditRecorder;
  /** Cross-cutting plugins that must run before access control (session cookies, rate limits, Origin check). */
  plugins: (app: FastifyInstance) => Promise<void>;
  routes: (app: FastifyInstance) => Promise<void>;
  /** Refuses the start (SecretsKeyError) when the configured keys do not open the data keys at rest. */
  verifyKeys(): Promise<void>;
  close(): Promise<void>;
}

/** The composition root: every dependency is built here once and passed down explicitly. */
export function createContainer(config: ApiConfig, log: FastifyBaseLogger): Container {
  const { db, sql, vault } = createDatabase({ url: config.DATABASE_URL, keys: keyringFromSettings(config) });
  const redis = createRedis(config.REDIS_URL, 'request');
  const queueRedis = createRedis(config.REDIS_URL, 'worker');
  const producer = createProducer(redis, config.QUEUE_PREFIX);
  const jobs = createJobQueue({
    producer,
    connection: queueRedis,
    prefix: config.QUEUE_PREFIX,
    lifecycleWaitMs: config.LIFECYCLE_WAIT_MS,
    log,
  });
  const identity = createIdentityStore(db, sql);
  const keyTargets = createKeyTargetsStore(sql);
  const auth = createAuthModule({ config, db, redis, identity, keyTargets, log });
  const authenticator = createAuthenticator({ identity, sessions: auth.sessions });
  const keyLimits = createKeyLimitCheck({ targets: keyTargets });
  const auditStore = createAuditStore(db, sql);
  const audit = createAuditRecorder({ store: auditStore });
  const retention = startAuditRetention({ store: auditStore, days: config.AUDIT_RETENTION_DAYS, log });
  const catalog = loadCatalog();
  const customers = createCustomersStore(db);
  const admin = createAdminService({ customers, users: createUsersStore(db) });
  const notifier = createChangeNotifier(createRedis(config.REDIS_URL, 'worker'));
  const servicesStore = createServicesStore(db, sql, vault);
  const variableGroupsStore = createVariableGroupsStore(db);
  const sourcePolicy = sourcePolicyOf(
    config,
    {
      urls: [config.DATABASE_URL, config.REDIS_URL, config.PUBLIC_URL, config.OIDC_ISSUER],
      localPorts: [config.API_PORT],
    },
    catalogImages(catalog),
  );
  const deployments = createDeploymentsService({
    deployments: createDeploymentsStore(db),
    services: servicesStore,
    notifier,
    wake: (id) => redis.publish(deploymentChannel(config.QUEUE_PREFIX, id), 'changed'),
    prefix: config.QUEUE_PREFIX,
    log,
  });
  const logs = createLogsService({
    services: servicesStore,
    reader: createLogReader(redis, config.QUEUE_PREFIX),
  });
  const nodesStore = createNodesStore(db, config.QUEUE_PREFIX);
  const nodes = createNodesService({
    nodes: nodesStore,
    enqueueAvailability: (nodeId) => jobs.enqueueNodeAvailability(nodeId),
  });
  const streamGuard = createStreamGuard({ authenticator, recheckMs: config.STREAM_RECHECK_MS });
  const customDomainsStore = createCustomDomainsStore(db);
  const services = createServicesService({
    services: servicesStore,
    groups: variableGroupsStore,
    customers,
    events: createEventsStore(db),
    jobs,
    catalog,
    publicUrl: (name) => `${config.APPS_SCHEME}://${name}.${config.APPS_DOMAIN}`,
    appsDomain: config.APPS_DOMAIN,
    ...(config.RUNTIME === 'swarm'
      ? { placement: async (id: string) => toPlacement(await nodesStore.placementOf(id)) }
      : {}),
    reservedHosts: [config.PUBLIC_URL, config.OIDC_ISSUER].map((url) => new URL(url).hostname),
    sourcePolicy: { ...sourcePolicy, containerLimits: containerLimitPolicy(config) },
    releaseStaleDomainClaims: (domains, serviceId) =>
      customDomainsStore.releaseStalePendingClaims(
        domains,
        serviceId,
        config.DOMAIN_CLAIM_TTL_HOURS * 3_600_000,
      ),
  });
  const notifications = createNotificationsService({
    store: createNotificationsStore(db),
    customers,
    urlPolicy: {
      allowedHosts: sourcePolicy.notificationAllowedHosts,
      protectedEndpoints: sourcePolicy.protectedEndpoints,
    },
    redeliverThrottle: {
      intervalMs: config.NOTIFY_REDELIVER_INTERVAL_MS,
      perMinute: config.NOTIFY_REDELIVER_PER_MINUTE,
    },
    platformCustomerId: config.PLATFORM_NOTIFICATIONS_CUSTOMER_ID,
    enqueueAttempt: async (deliveryId, attempts) =>
      void (await producer.enqueue('notify', { deliveryId, attempts })),
  });
  const quotas = createQuotasService({ store: createQuotasStore(db) });
  const usage = createUsageService({
    store: createUsageStore(db),
    customerExists: async (id) => (await db.customer.count({ where: { id } })) > 0,
  });
  const serviceMetrics = createServiceMetricsService({
    services: servicesStore,
    metrics: createServiceMetricsStore(db),
  });
  const runsStore = createRunsStore(db);
  const runs = createRunsService({
    runs: runsStore,
    services: servicesStore,
    enqueueRun: async (runId) => void (await producer.enqueue('run', { runId })),
  });
  const runOutput = createRunOutputService({
    runs: runsStore,
    reader: createRunOutputReader(redis, config.QUEUE_PREFIX),
  });
  const exec = createExecService({
    services: servicesStore,
    runs: runsStore,
    sessions: createExecSessionsStore(db),
    bounds: createExecBounds({
      redis,
      prefix: config.QUEUE_PREFIX,
      perService: config.EXEC_MAX_PER_SERVICE,
      perCustomer: config.EXEC_MAX_PER_CUSTOMER,
    }),
    enqueueExec: async (execSessionId) => void (await producer.enqueue('exec', { execSessionId })),
  });
  const schedules = createSchedulesService({
    schedules: createSchedulesStore(db),
    services: servicesStore,
    runs: runsStore,
    runsService: runs,
    minIntervalSeconds: config.SCHEDULE_MIN_INTERVAL_SECONDS,
  });

  const backupsStore = createBackupsStore(db);
  const backups = createBackupsService({
    store: backupsStore,
    services: servicesStore,
    clone: createBackupClone({
      backups: backupsStore,
      services: servicesStore,
      groups: variableGroupsStore,
      clones: createBackupCloneStore(db),
      prepareCreate: (principal, body) => services.prepareCreate(principal, body),
      enqueueRestore: async (restoreId) => void (await producer.enqueue('restore', { restoreId })),
    }),
    enqueue: async (run) => {
      if (run.kind === 'restore') await producer.enqueue('restore', { restoreId: run.restoreId });
      else await producer.enqueue(run.kind, { backupId: run.backupId });
    },
  });
  const backupSchedule = createBackupScheduleService({
    store: createBackupSchedulesStore(db),
    services: servicesStore,
    minIntervalSeconds: config.BACKUP_SCHEDULE_MIN_INTERVAL_SECONDS,
  });
  const backupTarget = createBackupTargetService({
    store: createCustomerBackupTargetsStore(db),
    endpointPolicy: {
      allowedHosts: sourcePolicy.backupTargetAllowedHosts,
      protectedEndpoints: sourcePolicy.protectedEndpoints,
    },
  });
  const webhooks = createWebhooksService({
    hooks: createWebhooksStore(db),
    services: servicesStore,
    jobs,
    secretKey: webhookSecretKey(config),
    publicUrl: config.PUBLIC_URL,
  });
  const customDomains = createCustomDomainsService({
    services: servicesStore,
    domains: customDomainsStore,
    certificates: createTlsCertificatesStore(db),
    verify: createDomainVerifier({
      servers: config.DOMAIN_VERIFICATION_RESOLVER,
      appsDomain: config.APPS_DOMAIN,
    }),
    appsDomain: config.APPS_DOMAIN,
  });

  return {
    config,
    db,
    redis,
    producer,
    jobs,
    authenticator,
    keyLimits,
    audit,
    plugins: auth.plugins,
    async routes(app) {
      registerIdempotency(app, {
        redis,
        prefix: config.QUEUE_PREFIX,
        fingerprintKey: fingerprintKey(config.SESSION_SECRET),
      });
      registerHealthRoutes(app, { db, redis });
      registerMetrics(app, createApiMetrics());
      registerServiceRoutes(app, services);
      registerVariableGroupRoutes(
        app,
        createVariableGroupsService({
          groups: variableGroupsStore,
          services: servicesStore,
          customers,
          jobs,
        }),
        createGroupAttachments({
          groups: variableGroupsStore,
          services: servicesStore,
          update: (...change) => services.update(...change),
        }),
      );
      registerTemplateRoutes(app, catalog);
      registerAdminRoutes(app, admin);
      registerDeploymentRoutes(app, deployments, streamGuard);
      registerLogRoutes(app, logs, streamGuard);
      registerAuditRoutes(app, createAuditService({ store: auditStore }));
      registerNodeRoutes(app, nodes);
      registerNotificationRoutes(app, notifications);
      registerQuotaRoutes(app, quotas);
      registerUsageRoutes(app, usage);
      registerServiceMetricsRoutes(app, serviceMetrics);
      registerRunRoutes(app, runs, runOutput, streamGuard);
      registerExecRoutes(app, exec, {
        relay: createExecRelay(redis, config.QUEUE_PREFIX),
        guard: streamGuard,
        idleMs: config.EXEC_IDLE_TIMEOUT_MS,
        audit,
      });
      registerScheduleRoutes(app, schedules);
      registerBackupRoutes(app, backups);
      registerBackupScheduleRoutes(app, backupSchedule);
      registerBackupTargetRoutes(app, backupTarget);
      registerWebhookRoutes(app, webhooks);
      registerCustomDomainRoutes(app, customDomains);
      registerCertificateRoutes(app, createTlsCertificatesStore(db));
      await registerWebhookReceiver(app, webhooks, {
        redis,
        prefix: config.QUEUE_PREFIX,
        perMinute: config.WEBHOOK_RATE_LIMIT_PER_MINUTE,
        audit,
        log,
      });
      auth.routes(app);
      registerDashboardRoutes(app, { dir: config.DASHBOARD_DIR, publicUrl: config.PUBLIC_URL });
    },
    verifyKeys: () => vault.verify(),
    async close() {
      retention.stop();
      // The events of the last requests are written before the database connection goes.
      await audit.flush();
      await jobs.close();
      await notifier.close();
      await producer.close();
      await Promise.allSettled([db.$disconnect(), redis.quit(), queueRedis.quit()]);
    },
  };
}
