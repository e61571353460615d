import { useQueryClient } from '@tanstack/react-query';
import { must, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { SecretsForm } from '../components/SecretsForm.tsx';
import { invalidateService } from './actions.ts';

/** The service's secret variables (the form is shared with variable groups). */
export function SecretVariablesEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const path = { params: { path: { id: service.id } } };
  return (
    <SecretsForm
      secrets={service.secret_variables}
      canEdit={canEdit}
      savedText="Secret saved; a redeploy applying it has been queued."
      reveal={async (name) =>
        (await must(api.POST('/api/services/{id}/secret-variables/reveal', { ...path, body: { name } })))
          .value
      }
      save={(changes) =>
        must(api.PATCH('/api/services/{id}', { ...path, body: { secret_variables: changes } }))
      }
      onSettled={() => invalidateService(queries, service.id)}
    />
  );
}
