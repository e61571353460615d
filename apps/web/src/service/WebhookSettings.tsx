import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must, type Service } from '@hostctl/api-client';
import { ProblemAlert } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';

/**
 * The service's push webhook (docs/webhooks.md): whether it has one, and a button that creates it
 * or rotates it, showing the URL and the secret once. A new hook counts against the customer's
 * `webhooks` quota; a refusal shows here, at the button (docs/quotas.md#in-the-dashboard).
 */
export function WebhookSettings({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const key = ['webhook', service.id];
  const hook = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/api/services/{id}/webhook', { params: { path: { id: service.id } } })),
  });
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/services/{id}/webhook', { params: { path: { id: service.id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: key }),
  });
  const exists = hook.data?.exists ?? false;
  return (
    <section className="card" aria-labelledby="webhook-settings-heading">
      <h2 id="webhook-settings-heading">Push webhook</h2>
      <p className="muted">
        {hook.data?.exists && hook.data.created_at
          ? `A push webhook redeploys this service on a push to ${service.git_branch ?? 'its branch'}; created ${dateTime(hook.data.created_at)}.`
          : 'No push webhook: pushes to the repository do not redeploy this service.'}
      </p>
      {create.data ? (
        <div className="notice" role="status">
          <p>Give these to the forge once: the secret is not shown again.</p>
          <dl>
            <dt>Payload URL</dt>
            <dd>
              <code>{create.data.url}</code>
            </dd>
            <dt>Secret</dt>
            <dd>
              <code>{create.data.secret}</code>
            </dd>
          </dl>
        </div>
      ) : null}
      {canEdit ? (
        <button type="button" disabled={create.isPending || hook.isPending} onClick={() => create.mutate()}>
          {exists ? 'Rotate webhook' : 'Create webhook'}
        </button>
      ) : null}
      <ProblemAlert error={hook.error ?? create.error} />
    </section>
  );
}
