import type { Repairs } from '../reconciler.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** The reconciler's onSweep: each sweep's outcome and what it repaired, as metrics. */
export function recordSweeps(metrics: Pick<WorkerMetrics, 'sweep' | 'repaired'>) {
  return (result: 'ok' | 'error' | 'skipped', seconds?: number, repairs?: Repairs): void => {
    metrics.sweep(result, seconds);
    if (!repairs) return;
    metrics.repaired('deploy_requeued', repairs.deploysRequeued);
    metrics.repaired('delete_requeued', repairs.deletesRequeued);
    metrics.repaired('orphan_removed', repairs.orphansRemoved);
    metrics.repaired('stray_set_removed', repairs.straySetsRemoved);
    metrics.repaired('service_restored', repairs.servicesRestored);
    metrics.repaired('service_failed', repairs.servicesFailed);
  };
}
