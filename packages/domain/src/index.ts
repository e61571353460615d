// Domain vocabulary shared by every app: statuses, roles, the lifecycle state machine and error codes.
// This package has no runtime dependencies so that every other package can import it.
export * from './types.js';
export * from './errors.js';
export * from './transitions.js';
export * from './names.js';
export * from './quotas.js';
