/**
 * One piece of the running worker: started in list order, stopped in the reverse order, so what
 * a part needs is up before it starts and still up until it has stopped. `enabled: false` parts
 * are not started (tests drive the reconciler or observers by hand) but are still stopped: a
 * test may have run them once, and what they hold (leases, timers) must go with the worker.
 */
export interface WorkerPart {
  name: string;
  enabled?: boolean;
  start(): Promise<void> | void;
  stop?(): Promise<void>;
}

export async function startParts(parts: readonly WorkerPart[]): Promise<void> {
  for (const part of parts) if (part.enabled !== false) await part.start();
}

export async function stopParts(parts: readonly WorkerPart[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.stop?.();
}
