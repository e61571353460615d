import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { must, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field } from '../components/Field.tsx';
import { ComponentChoice } from '../service/ComponentChoice.tsx';
import { useComponents } from '../service/components-query.ts';
import { TerminalSession, type TerminalState } from './terminal-session.ts';
import TerminalScreen, { type TerminalScreenHandle } from './TerminalScreen.tsx';

type PanelState = { kind: 'idle' } | TerminalState;

function statusText(state: PanelState): string {
  switch (state.kind) {
    case 'idle':
      return 'Not connected.';
    case 'connecting':
      return 'Connecting…';
    case 'ready':
      return `Connected to ${state.container}.`;
    case 'exited':
      return `The command ended with exit code ${state.exitCode}.`;
    case 'closed':
      return state.failed ? 'Not connected.' : state.reason;
  }
}

/**
 * The terminal's controls and screen (loaded lazily by TerminalTab): pick a component, connect,
 * type; the connection's state is in text and announced. Connecting first asks the API with a plain
 * GET (the preflight), because a browser cannot read why a WebSocket handshake was refused.
 */
export default function TerminalPanel({ service }: { service: Service }) {
  const components = useComponents(service.id);
  const [component, setComponent] = useState('');
  const [state, setState] = useState<PanelState>({ kind: 'idle' });
  const screen = useRef<TerminalScreenHandle>(null);
  const session = useRef<TerminalSession | null>(null);
  const isOpen = state.kind === 'connecting' || state.kind === 'ready';

  const connect = useMutation({
    mutationFn: () =>
      must(
        api.GET('/api/services/{id}/exec', {
          params: { path: { id: service.id }, query: component ? { component } : {} },
        }),
      ),
    onSuccess: () => {
      screen.current?.clear();
      const opened = new TerminalSession(service.id, component, {
        onState: (next) => {
          setState(next);
          if (next.kind === 'ready') screen.current?.focus();
        },
        onOutput: (data) => screen.current?.write(data),
      });
      const size = screen.current?.size();
      if (size) opened.resize(size.cols, size.rows);
      session.current = opened;
    },
  });

  // Leaving the tab hangs up: a terminal nobody sees must not hold a slot until the idle timeout.
  useEffect(() => () => session.current?.close(), []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    session.current?.close();
    session.current = null;
    connect.mutate();
  };
  const disconnect = () => {
    session.current?.close();
    session.current = null;
  };

  return (
    <>
      <p className="muted">
        Runs a shell (<code>/bin/sh</code>) in a running container of the component, like{' '}
        <code>hostctl exec</code>. Opening it is audited; what you type is never recorded. Tab completes in
        the shell: press Escape, then Tab, to leave the terminal.
      </p>
      <form className="form-row" onSubmit={submit}>
        <Field id="terminal-component" label="Component">
          {(control) => (
            <ComponentChoice
              control={control}
              components={components}
              value={component}
              onChange={setComponent}
              disabled={isOpen}
            />
          )}
        </Field>
        <button type="submit" className="primary" disabled={isOpen || connect.isPending}>
          {state.kind === 'exited' || state.kind === 'closed' ? 'Connect again' : 'Connect'}
        </button>
        <button type="button" disabled={!isOpen} onClick={disconnect}>
          Disconnect
        </button>
      </form>
      <p className="muted" role="status" aria-live="polite">
        {connect.isPending ? 'Checking access…' : statusText(state)}
      </p>
      <ProblemAlert error={connect.error} />
      {state.kind === 'closed' && state.failed ? (
        <div role="alert" className="alert">
          <strong>Terminal closed.</strong> {state.reason}
          {state.detail ? <span> ({state.detail})</span> : null}
        </div>
      ) : null}
      <div role="group" aria-label="Terminal" className="terminal-frame">
        <TerminalScreen
          ref={screen}
          label={`Terminal input, ${component || 'web component'} of ${service.name}`}
          onInput={(data) => session.current?.send(data)}
          onResize={(cols, rows) => session.current?.resize(cols, rows)}
        />
      </div>
    </>
  );
}
