import { useQuery } from '@tanstack/react-query';
import { must } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { StatusBadge } from '../components/feedback.tsx';

/**
 * Each custom domain's proof of ownership and certificate (docs/tls.md#custom-domain-certificates),
 * keyed by name: pending until verified, verified while its certificate is on its way, active
 * with it; the certificate's expiry and the last order's error when there is one.
 */
export function useDomainStates(serviceId: string) {
  const states = useQuery({
    queryKey: ['custom-domains', serviceId],
    queryFn: () =>
      must(api.GET('/api/services/{id}/custom-domains', { params: { path: { id: serviceId } } })),
    refetchInterval: 30_000,
  });
  return new Map((states.data?.data ?? []).map((item) => [item.name, item]));
}

type DomainState = ReturnType<typeof useDomainStates> extends Map<string, infer T> ? T : never;

export function DomainStatus({ state }: { state: DomainState | undefined }) {
  if (!state) return null;
  const certificate = state.certificate;
  return (
    <span className="domain-status">
      <StatusBadge status={state.status} />
      {certificate?.not_after ? (
        <span className="muted">
          {' '}
          certificate until {new Date(certificate.not_after).toLocaleDateString()}
          {certificate.issuer ? ` (${certificate.issuer})` : ''}
        </span>
      ) : null}
      {certificate?.last_error ? (
        <span className="muted"> last order failed: {certificate.last_error}</span>
      ) : null}
    </span>
  );
}
