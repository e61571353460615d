import { parseAllowedHosts, type AllowedHost } from './allowed-hosts.js';
import { parsePlatformImages, type ImagePolicy } from './image.policy.js';
import { protectedEndpoints, type Endpoint } from './protected-endpoints.js';

/**
 * The whole source policy out of configuration, built the same way by the API and the worker so
 * both refuse the same things. Throws AllowlistError naming the variable on a malformed entry.
 */
export interface SourcePolicyConfig {
  GIT_ALLOWED_HOSTS: string;
  NOTIFICATION_ALLOWED_HOSTS: string;
  BACKUP_TARGET_ALLOWED_HOSTS: string;
  REGISTRY_ALLOWED_HOSTS: string;
  PLATFORM_IMAGES: string;
}

export interface SourcePolicy {
  gitAllowedHosts: AllowedHost[];
  /** Notification receivers only (never the git list: docs/notifications.md#target-urls). */
  notificationAllowedHosts: AllowedHost[];
  /** Customers' own backup endpoints only (docs/backups.md#a-customers-own-target). */
  backupTargetAllowedHosts: AllowedHost[];
  protectedEndpoints: Endpoint[];
  imagePolicy: ImagePolicy;
}

export function sourcePolicyOf(
  config: SourcePolicyConfig,
  controlPlane: { urls: readonly (string | undefined)[]; localPorts?: readonly number[] },
  catalogImages: readonly string[],
): SourcePolicy {
  const endpoints = protectedEndpoints(controlPlane.urls, controlPlane.localPorts);
  return {
    gitAllowedHosts: parseAllowedHosts(config.GIT_ALLOWED_HOSTS, 'GIT_ALLOWED_HOSTS'),
    notificationAllowedHosts: parseAllowedHosts(
      config.NOTIFICATION_ALLOWED_HOSTS,
      'NOTIFICATION_ALLOWED_HOSTS',
    ),
    backupTargetAllowedHosts: parseAllowedHosts(
      config.BACKUP_TARGET_ALLOWED_HOSTS,
      'BACKUP_TARGET_ALLOWED_HOSTS',
    ),
    protectedEndpoints: endpoints,
    imagePolicy: {
      platformImages: [...parsePlatformImages(config.PLATFORM_IMAGES), ...catalogImages],
      registryAllowedHosts: parseAllowedHosts(config.REGISTRY_ALLOWED_HOSTS, 'REGISTRY_ALLOWED_HOSTS'),
      protectedEndpoints: endpoints,
    },
  };
}
