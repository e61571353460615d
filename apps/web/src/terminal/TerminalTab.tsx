import { lazy, Suspense } from 'react';
import type { Service } from '@hostctl/api-client';

// xterm.js and everything that drives it are one chunk, fetched when an operator opens this tab.
const TerminalPanel = lazy(() => import('./TerminalPanel.tsx'));

/**
 * A terminal into a running container of the service (docs/jobs.md#terminal). It needs
 * `services:operate`, as the API's exec route does: a viewer gets the reason, and neither the
 * terminal's code nor any request to the API.
 */
export function TerminalTab({ service, canOperate }: { service: Service; canOperate: boolean }) {
  return (
    <section aria-labelledby="terminal-heading">
      <h2 id="terminal-heading">Terminal</h2>
      {canOperate ? (
        <Suspense
          fallback={
            <div aria-busy="true" className="muted state">
              Loading the terminal…
            </div>
          }
        >
          <TerminalPanel service={service} />
        </Suspense>
      ) : (
        <p className="muted">
          Terminals into the service&apos;s containers are open to operators and admins only: a shell in a
          container reads its variables and secrets and can change what runs.
        </p>
      )}
    </section>
  );
}
