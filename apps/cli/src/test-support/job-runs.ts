/**
 * A run as `/api/runs/:id` answers it (docs/jobs.md): queued, of the shell command `command`;
 * `extra` moves it on (status, exit code, output, schedule).
 */
export function jobRunBody(ids: { id: string; serviceId: string }, command: string[], extra: object = {}) {
  return {
    id: ids.id,
    service_id: ids.serviceId,
    command,
    component: null,
    timeout: 600,
    status: 'queued',
    exit_code: null,
    duration_ms: null,
    output_truncated: false,
    error: null,
    deployment_id: null,
    created_at: '2026-11-28T00:00:00Z',
    started_at: null,
    finished_at: null,
    schedule_id: null,
    scheduled_for: null,
    attempt: 1,
    output: '',
    ...extra,
  };
}
