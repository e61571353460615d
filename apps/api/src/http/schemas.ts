import { Type } from 'typebox';
import { LIMITS } from '@hostctl/domain';

/** Shared HTTP schemas: the problem body and pagination parameters. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String(),
    code: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    quota: Type.Optional(
      Type.Object(
        {
          name: Type.String(),
          limit: Type.Number(),
          usage: Type.Number(),
          requested: Type.Number(),
          customer_id: Type.Union([Type.String(), Type.Null()], {
            description: "whose quota; null for an unscoped user's own API keys",
          }),
        },
        {
          description:
            'quota_exceeded: the quota, its limit, current usage, what the request asked for and whose quota it is',
        },
      ),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: LIMITS.perPageMax, default: LIMITS.perPageDefault }),
  ),
};

/**
 * Every resource id the API accepts, in a path, query or body: ours are UUIDs, and anything
 * outside this alphabet cannot name a row, so it is a 400 before it reaches a query.
 */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const Id = Type.String({ minLength: 1, maxLength: 64, pattern: ID_PATTERN });

export const IdParams = Type.Object({ id: Id }, { additionalProperties: false });

export const Timestamp = Type.String({ format: 'date-time' });

/** Problem responses every authenticated route can produce. */
export const problemResponses = (...statuses: number[]) =>
  Object.fromEntries([401, 403, 429, 503, ...statuses].map((status) => [status, ProblemSchema]));
