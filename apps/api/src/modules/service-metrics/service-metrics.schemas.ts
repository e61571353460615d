import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

export const MetricsQuery = Type.Object(
  {
    from: Type.Optional({
      ...Timestamp,
      description: 'start of the range (inclusive); default: 24 hours before `to`',
    }),
    to: Type.Optional({ ...Timestamp, description: 'end of the range (exclusive); default: now' }),
    resolution: Type.Optional(
      Type.Union(
        [Type.Literal('5m'), Type.Literal('15m'), Type.Literal('1h'), Type.Literal('6h'), Type.Literal('1d')],
        {
          description:
            'width of each point, aligned to UTC; 5m and 15m reach 8 days back, the others 35 days; default: 5m for a range up to 7 days, else 1h',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type MetricsQuery = Static<typeof MetricsQuery>;

const MetricPoint = Type.Object({
  t: { ...Timestamp, description: 'start of the point' },
  samples: Type.Integer({ description: 'samples merged into the point (one per sweep, 30 s by default)' }),
  cpu_percent_avg: Type.Number({
    description: 'percent of one CPU (200 = two full CPUs), summed over containers',
  }),
  cpu_percent_max: Type.Number(),
  memory_mb_avg: Type.Number({ description: 'working set in MiB, summed over containers' }),
  memory_mb_max: Type.Number(),
  memory_limit_mb: Type.Number({ description: 'the largest limit sampled in the point; 0: no limit' }),
  network_rx_bytes: Type.Integer({ description: 'bytes received during the point' }),
  network_tx_bytes: Type.Integer({ description: 'bytes sent during the point' }),
  restarts: Type.Integer({ description: 'container restarts during the point' }),
  oom_kills: Type.Integer({ description: 'restarts caused by the out-of-memory killer (a lower bound)' }),
});

export const ServiceMetrics = Type.Object({
  service_id: Id,
  from: Timestamp,
  to: Timestamp,
  resolution: Type.String(),
  points: Type.Array(MetricPoint, { description: 'oldest first; a point without samples is absent' }),
  annotations: Type.Array(
    Type.Object({
      type: Type.Literal('deployment'),
      deployment_id: Id,
      status: Type.String(),
      at: { ...Timestamp, description: 'when the deployment was queued' },
      finished_at: Type.Union([Timestamp, Type.Null()]),
    }),
    { description: 'deployments queued in the range, oldest first (at most 200)' },
  ),
});
