import type { DeploymentSummaryRow } from '@hostctl/db';
import type { DeploymentTrigger, UpdateOrder } from '@hostctl/domain';
import type { DeploymentSummary } from './deployments.schemas.js';

/** A deployment row as the API shows it in a history page and in the single view. */
export function toSummary(row: DeploymentSummaryRow): DeploymentSummary {
  return {
    id: row.id,
    service_id: row.serviceId,
    trigger: row.trigger as DeploymentTrigger,
    status: row.status,
    step: row.step,
    commit: row.commit,
    image_digest: row.imageDigest,
    image_digests: imageDigestsOf(row.imageDigests),
    update_order: row.updateOrder as UpdateOrder | null,
    rollback_of: row.rollbackOf,
    warnings: row.warnings,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

/** The worker writes {component: reference}; anything else (not recorded yet) shows as null. */
function imageDigestsOf(value: unknown): Record<string, string> | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const entries = Object.entries(value).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return Object.fromEntries(entries);
}
