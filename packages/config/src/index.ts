// Environment configuration: one schema per app, validated once at start-up by loadConfig(),
// which reports every bad variable at once. Secrets have no defaults. Also the process guard
// every app installs at start-up (process-guard.ts).
export * from './load.js';
export * from './schemas.js';
export * from './production-safety.js';
export * from './process-guard.js';
