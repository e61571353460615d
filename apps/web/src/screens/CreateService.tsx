import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client.ts';
import { must, type Me } from '@hostctl/api-client';
import { ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { servicePath } from '../routes.ts';
import { navigate, useLocation } from '../router.tsx';
import { ComposeEditor } from './ComposeEditor.tsx';
import { TemplateFields } from './TemplateFields.tsx';

const METHODS = [
  { id: 'template', label: 'Template' },
  { id: 'compose', label: 'Compose' },
  { id: 'git', label: 'Git repository' },
  { id: 'ai', label: 'AI (repository analysed)' },
] as const;
type Method = (typeof METHODS)[number]['id'];

const NAME_PATTERN = '[a-z0-9][a-z0-9\\-]{1,61}[a-z0-9]';

/** Create a service by one of the four methods; the method is in the URL (?method=compose). */
export function CreateServiceScreen({ me }: { me: Me }) {
  const location = useLocation();
  const fromUrl = new URLSearchParams(location.search).get('method');
  const method: Method = METHODS.some((m) => m.id === fromUrl) ? (fromUrl as Method) : 'template';
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [customer, setCustomer] = useState(me.customer_id ?? '');
  const [templateId, setTemplateId] = useState('');
  const [variables, setVariables] = useState<Record<string, string>>({});
  const [compose, setCompose] = useState('services:\n  web:\n    image: \n');
  const [gitUrl, setGitUrl] = useState('');
  const [gitBranch, setGitBranch] = useState('');
  const [aiUrl, setAiUrl] = useState('');
  const customers = useQuery({
    queryKey: ['customers', 'all'],
    queryFn: () => must(api.GET('/api/customers', { params: { query: { per_page: 100 } } })),
    enabled: me.customer_id === null,
  });

  const create = useMutation({
    mutationFn: () => {
      const common = { name, ...(customer ? { customer_id: customer } : {}) };
      const filled = Object.fromEntries(Object.entries(variables).filter(([, value]) => value !== ''));
      const body =
        method === 'template'
          ? { ...common, deploy_method: method, template_id: templateId, variables: filled }
          : method === 'compose'
            ? { ...common, deploy_method: method, compose }
            : method === 'git'
              ? {
                  ...common,
                  deploy_method: method,
                  git_url: gitUrl,
                  ...(gitBranch ? { git_branch: gitBranch } : {}),
                }
              : { ...common, deploy_method: method, ai_url: aiUrl };
      return must(api.POST('/api/services', { body }));
    },
    onSuccess: async (created) => {
      await queries.invalidateQueries({ queryKey: ['services'] });
      navigate(servicePath(created.id, 'deployments'));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };

  return (
    <>
      <PageHeading title="Create a service" />
      <form className="stack" onSubmit={submit} aria-describedby="create-hint">
        <p id="create-hint" className="hint">
          The service is deployed right away; its deployment page follows the progress live.
        </p>
        <fieldset className="methods">
          <legend>Deployment method</legend>
          {METHODS.map((option) => (
            <label key={option.id} className="inline">
              <input
                type="radio"
                name="method"
                value={option.id}
                checked={method === option.id}
                onChange={() => navigate(`/services/new?method=${option.id}`, { replace: true })}
              />
              {option.label}
            </label>
          ))}
        </fieldset>
        <label>
          Name
          <input
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            pattern={NAME_PATTERN}
            maxLength={63}
            aria-describedby="name-hint"
            autoComplete="off"
          />
        </label>
        {/* Outside the label: a hint inside it would become part of the field's name. */}
        <p id="name-hint" className="hint">
          3–63 lower-case letters, digits and hyphens; it becomes the service&apos;s address.
        </p>
        {me.customer_id === null ? (
          <label>
            Customer
            <select required value={customer} onChange={(e) => setCustomer(e.target.value)}>
              <option value="">Choose a customer</option>
              {(customers.data?.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <ProblemAlert error={customers.error} />
        {method === 'template' ? (
          <TemplateFields
            templateId={templateId}
            onTemplate={(id) => {
              setTemplateId(id);
              setVariables({});
            }}
            values={variables}
            onValue={(key, value) => setVariables((current) => ({ ...current, [key]: value }))}
          />
        ) : null}
        {method === 'compose' ? (
          <ComposeEditor value={compose} onChange={setCompose} problem={create.error} />
        ) : null}
        {method === 'git' ? (
          <>
            <label>
              Repository URL
              <input required type="url" value={gitUrl} onChange={(e) => setGitUrl(e.target.value)} />
            </label>
            <label>
              Branch (optional)
              <input value={gitBranch} onChange={(e) => setGitBranch(e.target.value)} placeholder="main" />
            </label>
          </>
        ) : null}
        {method === 'ai' ? (
          <label>
            Repository URL to analyse
            <input required type="url" value={aiUrl} onChange={(e) => setAiUrl(e.target.value)} />
          </label>
        ) : null}
        <ProblemAlert error={create.error} />
        <div>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create service
          </button>
        </div>
      </form>
    </>
  );
}
