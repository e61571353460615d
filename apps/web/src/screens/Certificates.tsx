import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState, Pager } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { certificateState, EXPIRING_DAYS } from '../certificate-state.ts';
import { dateTime, timeAgo } from '../format.ts';

const PER_PAGE = 50;

/**
 * The platform's own certificates (GET /api/certificates, docs/tls.md): the wildcard of the apps
 * domain and one per verified custom domain, with expiry and the last renewal attempt. For the
 * platform's operators only: the API refuses a customer-scoped caller, and the nav hides it.
 */
export function CertificatesScreen() {
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: ['certificates'],
    queryFn: () => must(api.GET('/api/certificates')),
  });
  const rows = list.data?.data ?? [];
  const shown = rows.slice((page - 1) * PER_PAGE, page * PER_PAGE);
  const now = Date.now();
  return (
    <>
      <PageHeading title="Certificates" />
      <p className="muted">
        Renewed at two thirds of their lifetime; “expiring soon” means less than {EXPIRING_DAYS} days left,
        which only happens when renewals keep failing.
      </p>
      <ListState
        noun="certificates"
        isPending={list.isPending}
        error={list.error}
        isEmpty={rows.length === 0}
        empty="No certificates: ACME is not configured, or the first order has not run yet."
      >
        {/* Seven columns scroll sideways on a phone: the region takes focus so a keyboard can scroll it. */}
        <div className="table-scroll" role="region" aria-label="Certificates table" tabIndex={0}>
          <table>
            <caption className="visually-hidden">The platform’s certificates</caption>
            <thead>
              <tr>
                <th scope="col">Covers</th>
                <th scope="col">State</th>
                <th scope="col">Days left</th>
                <th scope="col">Valid from</th>
                <th scope="col">Valid until</th>
                <th scope="col">Issuer</th>
                <th scope="col">Last renewal attempt</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((cert) => {
                const state = certificateState(cert, now);
                return (
                  <tr key={cert.name}>
                    <th scope="row">
                      <code>{cert.name}</code>
                      {cert.name.startsWith('*.') ? (
                        <div className="muted">every service name under {cert.name.slice(2)}</div>
                      ) : null}
                    </th>
                    <td>
                      <span className={`badge ${state.tone}`}>{state.label}</span>
                      {state.reason ? <div className="muted">Reason: {state.reason}</div> : null}
                    </td>
                    <td>{state.daysLeft ?? '—'}</td>
                    <td>{dateTime(cert.not_before)}</td>
                    <td>{dateTime(cert.not_after)}</td>
                    <td>{cert.issuer ?? '—'}</td>
                    <td>
                      {cert.last_attempt_at ? (
                        <time dateTime={cert.last_attempt_at} title={dateTime(cert.last_attempt_at)}>
                          {timeAgo(cert.last_attempt_at, now)}
                        </time>
                      ) : (
                        'never'
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        <Pager
          page={page}
          perPage={PER_PAGE}
          total={rows.length}
          onPage={setPage}
          label="Certificate pages"
        />
      </ListState>
    </>
  );
}
