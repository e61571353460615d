// The worker app: BullMQ processors that deploy, operate and delete services on Docker, and the
// reconciler. Exported so end-to-end tests can run a real worker in-process.
export { createWorkerApp, type WorkerApp, type WorkerAppOptions } from './worker-app.js';
export type { ContainerRuntime } from './adapters/runtime.js';
export type { ServiceRouter, Route } from './adapters/router.js';
