// The hostctl API's one client, for the dashboard and the CLI: types generated from the API's
// OpenAPI document (schema.d.ts, `pnpm api:client`), a typed fetch client and the problem error.
export { createApiClient, must, type ApiClient } from './client.js';
export {
  ProblemError,
  readProblem,
  toProblem,
  type FieldError,
  type ProblemFields,
  type QuotaRefusal,
} from './problem.js';
export type { components, paths } from './schema.js';
export type * from './types.js';
