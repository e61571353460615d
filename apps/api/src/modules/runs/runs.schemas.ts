import { Type, type Static } from 'typebox';
import { RUN_STATUSES } from '@hostctl/db';
import { PageQuery, Timestamp } from '../../http/schemas.js';
import { literals } from '../services/services.schemas.js';

/** Bounds of a run request (docs/jobs.md#limits): an argv, not a script upload. */
export const RUN_LIMITS = {
  argsMax: 256,
  argMaxBytes: 8 * 1024,
  commandMaxBytes: 64 * 1024,
  timeoutDefaultSeconds: 600,
  timeoutMaxSeconds: 3600,
} as const;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** An argv (runs and schedules): never a shell string; the whole of it is bounded by checkCommand. */
export const Command = Type.Array(Type.String({ maxLength: RUN_LIMITS.argMaxBytes }), {
  minItems: 1,
  maxItems: RUN_LIMITS.argsMax,
  description:
    'argv, run as it is (no shell: write ["sh", "-c", "…"] for one); replaces the component’s command, keeps its entrypoint',
});

/** Seconds before a run is stopped (runs and schedules). */
export const RunTimeout = Type.Integer({
  minimum: 1,
  maximum: RUN_LIMITS.timeoutMaxSeconds,
  description: `Seconds before the run is stopped and recorded as timed_out (default ${RUN_LIMITS.timeoutDefaultSeconds})`,
});

export const RunRequest = Type.Object(
  {
    command: Command,
    component: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description:
          'The compose service whose image, variables and limits the run takes; default: the web one',
      }),
    ),
    timeout: Type.Optional(RunTimeout),
  },
  { additionalProperties: false },
);
export type RunRequest = Static<typeof RunRequest>;

const summaryFields = {
  id: Type.String(),
  service_id: Type.String(),
  command: Type.Array(Type.String()),
  component: nullable(Type.String()),
  timeout: Type.Integer(),
  status: literals(RUN_STATUSES),
  exit_code: nullable(Type.Integer()),
  duration_ms: nullable(Type.Integer()),
  output_truncated: Type.Boolean({
    description: 'The output was longer than the bound: only its end is kept',
  }),
  error: nullable(Type.String()),
  deployment_id: nullable(Type.String({ description: 'The release the run took its image from' })),
  created_at: Timestamp,
  started_at: nullable(Timestamp),
  finished_at: nullable(Timestamp),
  schedule_id: nullable(
    Type.String({ description: 'The schedule whose run this is; null for a one-off run' }),
  ),
  scheduled_for: nullable(
    Type.String({
      format: 'date-time',
      description: 'The scheduled time the run stands for; null for run-now and one-off runs',
    }),
  ),
  attempt: Type.Integer({ description: '1, then 2… for the retries of a scheduled time' }),
};

export const RunSummary = Type.Object(summaryFields);
export type RunSummary = Static<typeof RunSummary>;

export const Run = Type.Object({ ...summaryFields, output: Type.String() });
export type Run = Static<typeof Run>;

export const RunList = Type.Object({
  data: Type.Array(RunSummary),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export type RunList = Static<typeof RunList>;

export const RunListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const RunQuery = Type.Object(
  {
    wait: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 300, description: 'Seconds to wait for a final status' }),
    ),
  },
  { additionalProperties: false },
);

export const RunOutputQuery = Type.Object(
  {
    follow: Type.Optional(
      Type.Boolean({
        description:
          'true upgrades to a WebSocket: the output as it is printed, one entry per message, then ' +
          '{"type": "end", "status", "exit_code", …} once the run is final (docs/jobs.md#following-a-run)',
      }),
    ),
  },
  { additionalProperties: false },
);

const OutputEntry = Type.Object({
  timestamp: Timestamp,
  stream: Type.String(),
  message: Type.String({ description: 'Output as printed, secrets masked: a chunk, not always a line' }),
});

export const RunOutput = Type.Object({
  status: literals(RUN_STATUSES),
  entries: Type.Array(OutputEntry, {
    description:
      'While the run goes on, what its live stream holds; once it is final, the stored output as one entry',
  }),
});
export type RunOutput = Static<typeof RunOutput>;
