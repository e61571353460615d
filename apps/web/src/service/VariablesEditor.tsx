import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must, type Service } from '@hostctl/api-client';
import { VariablesForm } from '../components/VariablesForm.tsx';
import { invalidateService } from './actions.ts';

/** The service's variables (the form is shared with variable groups). */
export function VariablesEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  return (
    <VariablesForm
      variables={service.variables}
      canEdit={canEdit}
      savedText="Variables saved; a redeploy applying them has been queued."
      save={async (changes) => {
        const updated = await must(
          api.PATCH('/api/services/{id}', {
            params: { path: { id: service.id } },
            body: { variables: changes },
          }),
        );
        return updated.variables;
      }}
      onSettled={() => invalidateService(queries, service.id)}
    />
  );
}
