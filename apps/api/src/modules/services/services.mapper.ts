import type { ServiceListRow, ServiceWithCustomer } from '@hostctl/db';
import type { ServiceDetail, ServiceListItem } from './services.schemas.js';
import { variablesView } from './secret-variables.js';

export function toListItem(service: ServiceListRow): ServiceListItem {
  return {
    id: service.id,
    name: service.name,
    status: service.status,
    url: service.url,
    customer_id: service.customerId,
    ...(service.templateId ? { template: service.templateId } : {}),
    deploy_method: service.deployMethod,
    created_at: service.createdAt.toISOString(),
    updated_at: service.updatedAt.toISOString(),
    resources: {
      cpu_usage: service.cpuUsage,
      memory_usage_mb: service.memoryUsageMb,
      memory_limit_mb: service.memoryLimitMb,
    },
  };
}

/** The detail without its attached groups (a second read: services.service.ts detailOf). */
export function toDetail(service: ServiceWithCustomer): Omit<ServiceDetail, 'variable_groups'> {
  const item = toListItem(service);
  return {
    ...item,
    resources: { ...item.resources, cpu_limit: service.cpuLimit, storage_mb: service.storageMb },
    customer_name: service.customer.name,
    compose: service.compose,
    // Plain variables as the spec shows them; secret ones by name only (secret-variables.ts).
    ...variablesView(service),
    custom_domains: service.customDomains,
    https: {
      redirect: service.httpsRedirect,
      hsts: service.hstsMaxAge === null ? false : { max_age: service.hstsMaxAge },
    },
    health: {
      status: service.healthStatus,
      last_check: service.healthLastCheck?.toISOString() ?? null,
      consecutive_failures: service.healthConsecutiveFailures,
    },
    deployed_at: service.deployedAt?.toISOString() ?? null,
    ...(service.gitUrl ? { git_url: service.gitUrl } : {}),
    ...(service.gitBranch ? { git_branch: service.gitBranch } : {}),
    ...(service.aiUrl ? { ai_url: service.aiUrl } : {}),
  };
}
