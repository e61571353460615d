import { Type, type Static } from 'typebox';
import { DEPLOY_METHODS, LIMITS, SERVICE_NAME_PATTERN, SERVICE_STATUSES } from '@hostctl/domain';
import { Id, ID_PATTERN, PageQuery, Timestamp } from '../../http/schemas.js';
import { variablesSchema } from './variables.js';
import { VariableGroupsField } from '../variable-groups/variable-groups.schemas.js';
import {
  SecretVariablesOnCreate,
  SecretVariablesOnUpdate,
  SecretVariablesView,
} from './secret-variables.schemas.js';

/** A string enum as plain JSON Schema `enum`, so errors read "must be one of a, b, c". */
export const literals = <const T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

export const ServiceListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(literals(SERVICE_STATUSES)),
    customer_id: Type.Optional(Id),
    sort: Type.Optional(literals(['name', 'status', 'created_at', 'updated_at'] as const)),
    order: Type.Optional(literals(['asc', 'desc'] as const)),
    search: Type.Optional(Type.String({ maxLength: LIMITS.searchMax })),
  },
  { additionalProperties: false },
);
export type ServiceListQuery = Static<typeof ServiceListQuery>;

const Resources = {
  cpu_usage: Type.Number(),
  memory_usage_mb: Type.Number(),
  memory_limit_mb: Type.Number(),
};

const listItemFields = {
  id: Type.String(),
  name: Type.String(),
  status: literals(SERVICE_STATUSES),
  url: Type.String(),
  customer_id: Type.String(),
  template: Type.Optional(Type.String()),
  deploy_method: literals(DEPLOY_METHODS),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const ServiceListItem = Type.Object({ ...listItemFields, resources: Type.Object(Resources) });
export type ServiceListItem = Static<typeof ServiceListItem>;

export const ServiceList = Type.Object({
  data: Type.Array(ServiceListItem),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

/** Where a service's tasks run (service detail, RUNTIME=swarm). */
export const Placement = Type.Array(
  Type.Object({
    task_id: Type.String(),
    node_id: Type.String({ format: 'uuid' }),
    hostname: Type.String(),
    component: Type.Union([Type.String(), Type.Null()]),
    slot: Type.Union([Type.Integer(), Type.Null()]),
    state: Type.String(),
    desired_state: Type.String(),
    message: Type.String(),
  }),
);
export type Placement = Static<typeof Placement>;

/** One year: the max-age `hsts: true` stands for (docs/tls.md#https-and-plain-http). */
export const HSTS_DEFAULT_MAX_AGE = 31_536_000;

/** How the service's routes treat HTTPS once the platform serves it (docs/api-decisions.md). */
const HttpsSettingsUpdate = Type.Object(
  {
    redirect: Type.Optional(
      Type.Boolean({
        description: 'Plain HTTP answers 308 to HTTPS (default true); ACME challenges are never redirected',
      }),
    ),
    hsts: Type.Optional(
      Type.Union(
        [
          Type.Boolean({
            description: `true: Strict-Transport-Security with max-age ${HSTS_DEFAULT_MAX_AGE}; false: none`,
          }),
          Type.Object(
            {
              max_age: Type.Integer({
                minimum: 1,
                maximum: 63_072_000,
                description: 'Seconds (at most two years)',
              }),
            },
            { additionalProperties: false },
          ),
        ],
        { description: 'Strict-Transport-Security on HTTPS answers (opt-in, default false)' },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const HttpsSettings = Type.Object({
  redirect: Type.Boolean(),
  hsts: Type.Union([Type.Literal(false), Type.Object({ max_age: Type.Integer() })]),
});

export const ServiceDetail = Type.Object({
  ...listItemFields,
  resources: Type.Object({ ...Resources, cpu_limit: Type.Number(), storage_mb: Type.Number() }),
  customer_name: Type.String(),
  compose: Type.String(),
  variables: Type.Record(Type.String(), Type.String()),
  secret_variables: SecretVariablesView,
  custom_domains: Type.Array(Type.String()),
  /** Redirect to HTTPS and HSTS, applied when the platform serves HTTPS (docs/tls.md). */
  https: HttpsSettings,
  variable_groups: Type.Array(Type.String(), {
    description: 'Attached variable groups in order (docs/secrets.md#variable-groups)',
  }),
  health: Type.Object({
    status: Type.String(),
    last_check: Type.Union([Timestamp, Type.Null()]),
    consecutive_failures: Type.Integer(),
  }),
  deployed_at: Type.Union([Timestamp, Type.Null()]),
  git_url: Type.Optional(Type.String()),
  git_branch: Type.Optional(Type.String()),
  ai_url: Type.Optional(Type.String()),
  /** RUNTIME=swarm only: the service's tasks and the nodes they run on. */
  placement: Type.Optional(Placement),
});
export type ServiceDetail = Static<typeof ServiceDetail>;

export const CreateServiceBody = Type.Object(
  {
    name: Type.String({
      minLength: LIMITS.nameMin,
      maxLength: LIMITS.nameMax,
      pattern: SERVICE_NAME_PATTERN,
    }),
    customer_id: Type.Optional(Id),
    deploy_method: literals(DEPLOY_METHODS),
    template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    variables: Type.Optional(variablesSchema(Type.String({ maxLength: LIMITS.variableValueMaxBytes }))),
    secret_variables: SecretVariablesOnCreate,
    variable_groups: VariableGroupsField,
    git_url: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.urlMax })),
    git_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    compose: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.composeMaxBytes })),
    ai_url: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.urlMax })),
  },
  { additionalProperties: false },
);
export type CreateServiceBody = Static<typeof CreateServiceBody>;

export const CreateServiceResult = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Literal('deploying'),
  url: Type.String(),
  deploy_job_id: Type.String(),
});

export const LifecycleResult = Type.Object({
  id: Type.String(),
  status: literals(SERVICE_STATUSES),
  message: Type.String(),
});

export const RedeployResult = Type.Object({
  id: Type.String(),
  status: literals(SERVICE_STATUSES),
  deploy_job_id: Type.String(),
});

/**
 * Rollback: the body is optional (no body, `{}` and `{"deployment_id": …}` are all accepted), so
 * the schema admits null, which is what Fastify validates a missing body as.
 */
export const RollbackBody = Type.Unsafe<{ deployment_id?: string } | null>({
  type: ['object', 'null'],
  properties: {
    deployment_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: ID_PATTERN,
      description: 'The succeeded deployment to go back to; default: the release before the current one',
    },
  },
  additionalProperties: false,
});
export type RollbackBody = Static<typeof RollbackBody>;

export const RollbackResult = Type.Object({
  id: Type.String(),
  status: Type.Literal('deploying'),
  deploy_job_id: Type.String({ description: 'The rollback deployment; follow it at /api/deployments/{id}' }),
});

/**
 * Host names a service answers on besides its own URL; routed by the proxy, recorded in DNS.
 * The schema only bounds the size: custom-domains.ts checks the syntax (IDN → punycode first).
 */

export const UpdateServiceBody = Type.Object(
  {
    variables: Type.Optional(
      variablesSchema(
        Type.Union([Type.String({ maxLength: LIMITS.variableValueMaxBytes }), Type.Null()]),
        'Merged into the current variables; null removes one',
      ),
    ),
    secret_variables: SecretVariablesOnUpdate,
    variable_groups: VariableGroupsField,
    custom_domains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        maxItems: LIMITS.customDomainsMax,
        uniqueItems: true,
      }),
    ),
    https: Type.Optional(HttpsSettingsUpdate),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateServiceBody = Static<typeof UpdateServiceBody>;

export const UpdateServiceResult = Type.Object({ ...ServiceDetail.properties, deploy_job_id: Type.String() });
