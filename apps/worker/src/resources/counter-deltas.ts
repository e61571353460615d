/**
 * Turns the engine's per-container counters (network bytes, restart count) into what happened
 * between two sweeps, which is what a history bucket adds up. The previous readings live in the
 * sampling replica's memory only: after a leader change the first sweep is a baseline, so at most
 * one interval of traffic and restarts goes uncounted (docs/health-and-resources.md#history).
 */
export interface ContainerCounters {
  networkRxBytes?: number;
  networkTxBytes?: number;
  restartCount?: number;
}

export interface CounterDeltas {
  networkRxBytes: number;
  networkTxBytes: number;
  restarts: number;
}

export function createCounterDeltas() {
  let previous: Map<string, ContainerCounters> | undefined;

  return {
    /**
     * `current` holds every container the sweep listed (a reading may be missing when a stats
     * or inspect call failed). A container absent from the previous sweep started since, so its
     * whole counters are new; one listed before without a reading is only a new baseline.
     */
    advance(current: Map<string, ContainerCounters>): Map<string, CounterDeltas> {
      const deltas = new Map<string, CounterDeltas>();
      if (previous) {
        for (const [id, now] of current) {
          const isNew = !previous.has(id);
          const before = previous.get(id) ?? {};
          deltas.set(id, {
            networkRxBytes: delta(now.networkRxBytes, before.networkRxBytes, isNew),
            networkTxBytes: delta(now.networkTxBytes, before.networkTxBytes, isNew),
            restarts: delta(now.restartCount, before.restartCount, isNew),
          });
        }
      }
      // A missing reading keeps the older one, so the next reading's delta covers both sweeps.
      const next = new Map<string, ContainerCounters>();
      for (const [id, now] of current) next.set(id, { ...previous?.get(id), ...defined(now) });
      previous = next;
      return deltas;
    },
  };
}

/** A counter that went down was reset (the container restarted): all of it is new. */
function delta(now: number | undefined, before: number | undefined, isNew: boolean): number {
  if (now === undefined) return 0;
  if (before === undefined) return isNew ? now : 0;
  return now >= before ? now - before : now;
}

function defined(counters: ContainerCounters): ContainerCounters {
  return Object.fromEntries(Object.entries(counters).filter(([, value]) => value !== undefined));
}
