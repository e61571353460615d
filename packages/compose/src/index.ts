// Compose documents in, deploy plans out: parses, interpolates and validates a tenant's compose
// file against an allowlist, and renders back exactly what will run. Pure: no Docker, no I/O.
export * from './plan.js';
export {
  containerCount,
  parseCompose,
  planCapacity,
  pickWeb,
  type ParseComposeOptions,
} from './compose.parser.js';
export { escape as escapeComposeValue, renderCompose } from './compose.renderer.js';
export { BACKUP_HOOK_TIMEOUT } from './backup-hooks.parser.js';
export { startOrder } from './dependency-graph.js';
export * from './container-limits.js';
export { YAML_BOUNDS } from './yaml-bounds.js';
