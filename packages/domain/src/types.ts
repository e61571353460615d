export const SERVICE_STATUSES = ['running', 'stopped', 'deploying', 'failed'] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

export const DEPLOY_METHODS = ['template', 'git', 'compose', 'ai'] as const;
export type DeployMethod = (typeof DEPLOY_METHODS)[number];

/**
 * Methods whose deployments clone a repository: the worker renders their compose document (it is
 * not the customer's text), and a push webhook can redeploy them.
 */
export const REPOSITORY_METHODS = ['git', 'ai'] as const satisfies readonly DeployMethod[];

/** Takes any string: raw SQL rows carry the method as text. */
export function isRepositoryMethod(method: string): boolean {
  return (REPOSITORY_METHODS as readonly string[]).includes(method);
}

export const ROLES = ['admin', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const LIFECYCLE_ACTIONS = ['start', 'stop', 'restart'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

export const DEPLOYMENT_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'superseded',
  'cancelled',
  'rolled_back',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** Statuses a deployment never leaves: followers stop at these, and cancel answers 409. */
export const FINAL_DEPLOYMENT_STATUSES = [
  'succeeded',
  'failed',
  'superseded',
  'cancelled',
  'rolled_back',
] as const satisfies readonly DeploymentStatus[];

/** Takes any string: raw SQL rows and API responses carry the status as text. */
export function isFinalDeployment(status: string): boolean {
  return (FINAL_DEPLOYMENT_STATUSES as readonly string[]).includes(status);
}

/** Why a deployment was requested: the service's creation, a redeploy, or a rollback to a release. */
export const DEPLOYMENT_TRIGGERS = ['create', 'redeploy', 'rollback'] as const;
export type DeploymentTrigger = (typeof DEPLOYMENT_TRIGGERS)[number];

/** The timeline event of a deployment's trigger: a creation is a `deploy`, the others keep their name. */
export function deploymentEventType(trigger: string): 'deploy' | 'redeploy' | 'rollback' {
  return trigger === 'redeploy' || trigger === 'rollback' ? trigger : 'deploy';
}

/** How a cutover replaced the previous release (docs/deployments.md#update-orders). */
export const UPDATE_ORDERS = ['start-first', 'stop-first'] as const;
export type UpdateOrder = (typeof UPDATE_ORDERS)[number];

export const HEALTH_STATUSES = ['healthy', 'unhealthy', 'starting', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** Event types of the per-service timeline (docs/api-decisions.md). */
export const EVENT_TYPES = [
  'deploy',
  'redeploy',
  'rollback',
  'start',
  'stop',
  'restart',
  'health',
  'status',
  'delete',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_STATUSES = [
  'started',
  'success',
  'failed',
  'rolled_back',
  'cancelled',
  'healthy',
  'unhealthy',
  'info',
] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Labels that mark Docker objects as ours; the reconciler never touches anything without them. */
export const OWNER_LABEL = 'io.hostctl.managed';
/**
 * Marks every object of one installation (its QUEUE_PREFIX), so several installations (or test
 * suites) can share an engine and a reconciler only ever removes orphans of its own installation.
 */
export const INSTANCE_LABEL = 'io.hostctl.instance';
export const SERVICE_LABEL = 'io.hostctl.service-id';
export const DEPLOYMENT_LABEL = 'io.hostctl.deployment-id';
export const COMPONENT_LABEL = 'io.hostctl.component';
/**
 * RUNTIME=swarm: a Swarm service holding a copy of the serving release's web component while
 * Swarm updates it (apps/worker/src/adapters/swarm-standby.ts); never a component of the plan.
 */
export const STANDBY_LABEL = 'io.hostctl.standby';
/** How many containers the deployment has: a service with fewer is missing one. */
export const SET_SIZE_LABEL = 'io.hostctl.set-size';
/**
 * A one-off container (a run or a release command, docs/jobs.md): its run id. Such a container
 * carries neither SERVICE_LABEL nor OWNER_LABEL, so no release set, log shipper, health check or
 * reconciler sweep ever takes it for one of the service's components; the worker that runs it
 * removes it.
 */
export const RUN_LABEL = 'io.hostctl.run-id';
export const RESERVED_LABEL_PREFIX = 'io.hostctl.';

/** Limits the API enforces; each one is listed in docs/limits.md. */
export const LIMITS = {
  nameMin: 3,
  nameMax: 63,
  composeMaxBytes: 256 * 1024,
  variablesMax: 200,
  variableNameMax: 128,
  variableValueMaxBytes: 32 * 1024,
  variablesTotalMaxBytes: 256 * 1024,
  bodyMaxBytes: 1024 * 1024,
  perPageDefault: 20,
  perPageMax: 100,
  logsTailDefault: 100,
  logsTailMax: 10_000,
  apiKeyNameMax: 100,
  searchMax: 100,
  customDomainsMax: 20,
  /** Scheduled jobs of one service (docs/jobs.md#limits). */
  schedulesPerService: 20,
  urlMax: 2048,
  /** Variable groups a customer may have (docs/secrets.md#variable-groups). */
  variableGroupsPerCustomer: 50,
  /** Groups attached to one service. */
  variableGroupsPerService: 10,
} as const;

/**
 * Events about the platform itself, not a customer's service: only the subscriptions of the
 * operator's customer (PLATFORM_NOTIFICATIONS_CUSTOMER_ID) may list them and receive them
 * (docs/notifications.md#platform-events).
 */
export const PLATFORM_NOTIFICATION_EVENTS = [
  'certificate.renewal_failed',
  'certificate.expiring',
  // A customer's hour of usage is final (docs/metering.md): for the operator's billing system.
  'usage.period_closed',
] as const;
export type PlatformNotificationEvent = (typeof PLATFORM_NOTIFICATION_EVENTS)[number];

/** Outbound notification events a customer may subscribe to (docs/notifications.md). */
export const NOTIFICATION_EVENTS = [
  'deployment.succeeded',
  'deployment.failed',
  'deployment.rolled_back',
  'service.failed',
  'service.unhealthy',
  'service.recovered',
  'service.deleted',
  // Threshold alerts on the resource history, once per streak (docs/notifications.md#threshold-alerts).
  'service.memory_high',
  'service.restart_loop',
  'job.failed',
  'job.missed',
  // A service's backups (docs/backups.md#notifications).
  'backup.failed',
  'backup.missed',
  'backup.verify_failed',
  // The customer's usage was found above one of its quotas (docs/quotas.md#over-quota-notification).
  'quota.exceeded',
  ...PLATFORM_NOTIFICATION_EVENTS,
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export const NOTIFICATION_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type NotificationDeliveryStatus = (typeof NOTIFICATION_DELIVERY_STATUSES)[number];
