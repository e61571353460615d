import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { dateTime, timeAgo } from '../format.ts';

const KEYS = ['api-keys'] as const;

/** The caller's own API keys: create (the key is shown once), list, revoke. */
export function ApiKeysScreen() {
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const keys = useQuery({ queryKey: KEYS, queryFn: () => must(api.GET('/api/auth/api-keys')) });
  const create = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/auth/api-keys', {
          body: { name: name.trim(), ...(expires ? { expires_at: new Date(expires).toISOString() } : {}) },
        }),
      ),
    onSuccess: () => {
      setName('');
      setExpires('');
    },
    onSettled: () => queries.invalidateQueries({ queryKey: KEYS }),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => must(api.DELETE('/api/auth/api-keys/{id}', { params: { path: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: KEYS }),
  });
  const rows = keys.data?.data ?? [];

  return (
    <>
      <PageHeading title="API keys" />
      <section className="card" aria-labelledby="new-key-heading">
        <h2 id="new-key-heading">New key</h2>
        <form
          className="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <label>
            Key name
            <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            Expires (optional)
            <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create key
          </button>
        </form>
        <ProblemAlert error={create.error} />
        {create.data ? <NewKey name={create.data.name} secret={create.data.key} /> : null}
      </section>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Your keys</h2>
        <ProblemAlert error={revoke.error} />
        <ListState noun="API keys" isPending={keys.isPending} error={keys.error} isEmpty={rows.length === 0}>
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Limits</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>{dateTime(key.created_at)}</td>
                    <td>{timeAgo(key.last_used_at)}</td>
                    <td>{key.expires_at ? dateTime(key.expires_at) : 'never'}</td>
                    <td>
                      {[
                        key.limits.service_id ? `service ${key.limits.service_id}` : null,
                        key.limits.customer_id ? `customer ${key.limits.customer_id}` : null,
                        key.limits.actions ? key.limits.actions.join(', ') : null,
                      ]
                        .filter(Boolean)
                        .join('; ') || 'none'}
                    </td>
                    <td>
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Revoke ${key.name}`}
                        disabled={revoke.isPending}
                        onClick={() => {
                          if (window.confirm(`Revoke the key "${key.name}"? Programs using it stop working.`))
                            revoke.mutate(key.id);
                        }}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </ListState>
      </section>
    </>
  );
}

/** The secret, shown once: the API keeps only its hash. */
function NewKey({ name, secret }: { name: string; secret: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <div className="notice" role="status">
      <p>
        Key <strong>{name}</strong> created. Copy it now: it is not shown again.
      </p>
      <div className="form-row">
        <label>
          New API key
          <input
            readOnly
            value={secret}
            className="code"
            size={Math.min(60, secret.length)}
            onFocus={(e) => e.target.select()}
          />
        </label>
        <button
          type="button"
          onClick={() => {
            navigator.clipboard.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
        >
          Copy
        </button>
        {copied === true ? <span>Copied.</span> : null}
        {copied === false ? <span>Copying failed: select the key and copy it.</span> : null}
      </div>
    </div>
  );
}
