import { Type, type Static } from 'typebox';
import { Id, PageQuery, Timestamp } from '../../http/schemas.js';

export const UsageQuery = Type.Object(
  {
    from: Type.Optional({
      ...Timestamp,
      description:
        'first hour counted (an hour counts when it starts in [from, to)); default: the start of the current UTC month',
    }),
    to: Type.Optional({ ...Timestamp, description: 'end of the range, exclusive; default: now' }),
    granularity: Type.Optional(
      Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')], {
        description: 'hourly records added up per UTC hour, day or month; default: day',
      }),
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description: 'csv: every row of the range in one text/csv document (no paging); default: json',
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuery>;

const Figures = {
  container_seconds: Type.Integer({ description: 'seconds × containers held' }),
  memory_mb_seconds: Type.Integer({ description: 'seconds × MiB of memory limits held' }),
  cpu_seconds: Type.Number({ description: 'seconds × CPUs of CPU limits held' }),
  deploys: Type.Integer({ description: 'deployments queued' }),
};

export const UsageReport = Type.Object({
  customer_id: Id,
  from: Timestamp,
  to: Timestamp,
  granularity: Type.String(),
  closed_through: Type.Union([Timestamp, Type.Null()], {
    description: 'every hour before this instant is closed and final; later hours have no records yet',
  }),
  data: Type.Array(
    Type.Object({
      period_start: Timestamp,
      service_id: Id,
      service_name: Type.Union([Type.String(), Type.Null()]),
      ...Figures,
    }),
  ),
  totals: Type.Object(Figures, { description: 'the whole range, every page' }),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
