import { Type, type Static } from 'typebox';
import { LIMITS, SERVICE_NAME_PATTERN } from '@hostctl/domain';
import { Id, PageQuery, Timestamp } from '../../http/schemas.js';
import { variablesSchema } from '../services/variables.js';
import {
  SecretVariablesOnCreate,
  SecretVariablesOnUpdate,
  SecretVariablesView,
} from '../services/secret-variables.schemas.js';

/** Group names follow service names: lowercase, digits and dashes (they appear in CLI commands). */
const GroupName = Type.String({
  minLength: LIMITS.nameMin,
  maxLength: LIMITS.nameMax,
  pattern: SERVICE_NAME_PATTERN,
});

const value = Type.String({ maxLength: LIMITS.variableValueMaxBytes });

const groupFields = {
  id: Type.String(),
  customer_id: Type.String(),
  name: Type.String(),
  version: Type.Integer({ description: 'Grows by one on every change; the ETag is its quoted value' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const VariableGroupListItem = Type.Object({
  ...groupFields,
  variable_names: Type.Array(Type.String(), {
    description: 'Every variable name of the group, plain and secret, sorted: names only, never a value',
  }),
  secret_variable_names: Type.Array(Type.String(), {
    description: 'Which of variable_names are secret (their values are write-only)',
  }),
  service_count: Type.Integer({ description: 'Live services the group is attached to' }),
});

export const VariableGroupList = Type.Object({
  data: Type.Array(VariableGroupListItem),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const VariableGroupListQuery = Type.Object(
  { ...PageQuery, customer_id: Type.Optional(Id) },
  { additionalProperties: false },
);
export type VariableGroupListQuery = Static<typeof VariableGroupListQuery>;

export const VariableGroupDetail = Type.Object({
  ...groupFields,
  variables: Type.Record(Type.String(), Type.String()),
  secret_variables: SecretVariablesView,
});
export type VariableGroupDetail = Static<typeof VariableGroupDetail>;

const AffectedService = Type.Object({ id: Type.String(), name: Type.String() });

export const AffectedServices = Type.Object({
  data: Type.Array(AffectedService, {
    description: 'Live services the group is attached to: a change reaches them on their next deploy',
  }),
});

export const UpdateVariableGroupResult = Type.Object({
  ...VariableGroupDetail.properties,
  affected_services: Type.Array(AffectedService, {
    description: 'Services that run the change once redeployed (POST …/redeploy does it in one request)',
  }),
});

export const CreateVariableGroupBody = Type.Object(
  {
    name: GroupName,
    customer_id: Type.Optional(Id),
    variables: Type.Optional(variablesSchema(value)),
    secret_variables: SecretVariablesOnCreate,
  },
  { additionalProperties: false },
);
export type CreateVariableGroupBody = Static<typeof CreateVariableGroupBody>;

export const UpdateVariableGroupBody = Type.Object(
  {
    name: Type.Optional(GroupName),
    variables: Type.Optional(
      variablesSchema(
        Type.Union([value, Type.Null()]),
        'Merged into the current variables; null removes one',
      ),
    ),
    secret_variables: SecretVariablesOnUpdate,
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateVariableGroupBody = Static<typeof UpdateVariableGroupBody>;

export const GroupRedeployResult = Type.Object({
  data: Type.Array(
    Type.Object({
      service_id: Type.String(),
      deploy_job_id: Type.String({ description: 'The deployment; follow it at /api/deployments/{id}' }),
    }),
  ),
});

/** A service's attached groups, on create and PATCH (docs/secrets.md#variable-groups). */
export const VariableGroupsField = Type.Optional(
  Type.Array(Id, {
    maxItems: LIMITS.variableGroupsPerService,
    uniqueItems: true,
    description:
      "Variable groups of the service's customer, in order: a later group's value wins over an earlier one's, the service's own over any group's. PATCH replaces the list",
  }),
);

export const AttachGroupBody = Type.Object(
  {
    service_id: Id,
    position: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LIMITS.variableGroupsPerService,
        description:
          "Where in the service's list (1 is applied first, so a later group wins); default: last. An attached group moves there",
      }),
    ),
  },
  { additionalProperties: false },
);
export type AttachGroupBody = Static<typeof AttachGroupBody>;

export const DetachGroupBody = Type.Object({ service_id: Id }, { additionalProperties: false });
export type DetachGroupBody = Static<typeof DetachGroupBody>;

export const AttachmentResult = Type.Object({
  service_id: Type.String(),
  variable_groups: Type.Array(Type.String(), { description: "The service's groups now, in order" }),
  deploy_job_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The redeploy that applies the change; null when nothing changed',
  }),
});
