import type { paths } from './schema.js';

type Path = keyof paths;
type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
type Operation<P extends Path, M extends Method> = paths[P][M];
type SuccessStatus = 200 | 201 | 202;

/** The JSON body of an operation's success answer (200, 201 or 202). */
export type JsonResponse<P extends Path, M extends Method> =
  Operation<P, M> extends { responses: infer Responses }
    ? {
        [Status in keyof Responses & SuccessStatus]: Responses[Status] extends {
          content: { 'application/json': infer Body };
        }
          ? Body
          : never;
      }[keyof Responses & SuccessStatus]
    : never;

/** The JSON request body an operation takes. */
export type JsonBody<P extends Path, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;

/** The query parameters an operation takes. */
export type Query<P extends Path, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Parameters } } ? NonNullable<Parameters> : never;

// The resources both the dashboard and the CLI read, named once.
export type Me = JsonResponse<'/api/auth/me', 'get'>;
export type ServiceList = JsonResponse<'/api/services', 'get'>;
export type ServiceSummary = ServiceList['data'][number];
export type Service = JsonResponse<'/api/services/{id}', 'get'>;
export type ServiceStatus = Service['status'];
export type NewService = JsonBody<'/api/services', 'post'>;
export type DeploymentList = JsonResponse<'/api/services/{id}/deployments', 'get'>;
export type Deployment = DeploymentList['data'][number];
/** GET /api/deployments/{id}: a deployment with the log lines after `after_seq`. */
export type DeploymentDetail = JsonResponse<'/api/deployments/{id}', 'get'>;
export type DeploymentLogLine = NonNullable<DeploymentDetail['logs']>[number];
export type ServiceEvent = JsonResponse<'/api/services/{id}/events', 'get'>['data'][number];
export type LogEntry = JsonResponse<'/api/services/{id}/logs', 'get'>['logs'][number];
/** GET /api/services/{id}/metrics: the resource history (docs/health-and-resources.md#history). */
export type ServiceMetrics = JsonResponse<'/api/services/{id}/metrics', 'get'>;
export type JobRun = JsonResponse<'/api/runs/{id}', 'get'>;
/** A row of a run history (service or schedule): a run without its output. */
export type JobRunSummary = JsonResponse<'/api/services/{id}/runs', 'get'>['data'][number];
export type Schedule = JsonResponse<'/api/schedules/{id}', 'get'>;
export type NewSchedule = JsonBody<'/api/services/{id}/schedules', 'post'>;
export type ScheduleChange = JsonBody<'/api/schedules/{id}', 'patch'>;
export type Backup = JsonResponse<'/api/backups/{id}', 'get'>;
export type Restore = JsonResponse<'/api/restores/{id}', 'get'>;
export type BackupSchedule = JsonResponse<'/api/services/{id}/backup-schedule', 'get'>;
export type BackupScheduleBody = JsonBody<'/api/services/{id}/backup-schedule', 'put'>;
export type BackupTarget = JsonResponse<'/api/customers/{id}/backup-target', 'get'>;
export type ApiKey = JsonResponse<'/api/auth/api-keys', 'get'>['data'][number];
export type Customer = JsonResponse<'/api/customers', 'get'>['data'][number];
export type User = JsonResponse<'/api/users', 'get'>['data'][number];
export type Template = JsonResponse<'/api/templates', 'get'>['data'][number];
