// The only package that talks to PostgreSQL: Prisma client factory, the offline migrator and the
// stores. Every store read that returns tenant data takes a CustomerScope.
export * from './client.js';
export * from './migrator.js';
export * from './errors.js';
export { SecretsKeyError, type KeyEncryptionKeys } from './vault/key-encryption-keys.js';
export {
  keyringFromEnvironment,
  keyringFromSettings,
  type KeyringSettings,
} from './vault/keyring-settings.js';
export type { Vault } from './vault/vault.js';
export {
  rewrapDataKeys,
  sealPlaintextRows,
  type RewrapReport,
  type SealReport,
} from './vault/maintenance.js';
export type { Prisma } from './generated/client.ts';
export type * from './generated/client.ts';
export * from './stores/scope-where.js';
export * from './stores/services.store.js';
export * from './stores/variable-groups.store.js';
export * from './stores/group-environment.js';
export { customerLimits, customerUsage, type CapacityClaim } from './stores/quota-ledger.js';
export * from './stores/quotas.store.js';
export * from './stores/quota-alerts.store.js';
export { servicesListStatement } from './stores/services.sql.js';
export * from './stores/events.store.js';
export * from './stores/identity.store.js';
export * from './stores/customers.store.js';
export * from './stores/bootstrap.store.js';
export * from './stores/worker-deployments.store.js';
export * from './stores/worker-services.store.js';
export * from './stores/worker-telemetry.store.js';
export * from './stores/worker-locks.store.js';
export * from './stores/deployments.store.js';
export * from './stores/api-keys.store.js';
export * from './stores/oidc-identity.store.js';
export * from './stores/users.store.js';
export * from './stores/key-targets.store.js';
export * from './stores/audit.store.js';
export * from './stores/nodes.store.js';
export * from './stores/notification-outbox.js';
export * from './stores/notifications.store.js';
export * from './stores/worker-notifications.store.js';
export * from './stores/webhooks.store.js';
export * from './stores/runs.store.js';
export * from './stores/exec-sessions.store.js';
export * from './stores/schedules.store.js';
export * from './stores/scheduler.store.js';
export * from './stores/custom-domains.store.js';
export * from './stores/tls-certificates.store.js';
export * from './stores/acme-dns-challenges.store.js';
export * from './stores/backups.store.js';
export * from './stores/backup-schedules.store.js';
export * from './stores/backup-verify-schedules.store.js';
export * from './stores/backup-clone.store.js';
export * from './stores/customer-backup-targets.store.js';
export * from './stores/backup-metrics.store.js';
export * from './stores/usage-meter.store.js';
export * from './stores/usage.store.js';
export * from './stores/service-metrics.store.js';
export * from './stores/service-alerts.store.js';
