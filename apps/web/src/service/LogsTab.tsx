import { useEffect, useRef, useState } from 'react';
import { ProblemAlert } from '../components/feedback.tsx';
import { openJsonSocket, textOf } from '../live-socket.ts';
import { LogBuffer, type LogLine } from '../logs/log-buffer.ts';
import { LogView } from '../logs/LogView.tsx';

/**
 * Live logs of a service over the log WebSocket. Lines arriving in a burst are appended once per
 * animation frame, so 10,000 lines at once cost a few renders, not 10,000.
 */
export function LogsTab({ serviceId }: { serviceId: string }) {
  const buffer = useRef(new LogBuffer()).current;
  const [version, setVersion] = useState(0);
  const [tail, setTail] = useState(500);
  const [since, setSince] = useState('');
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState('');
  const [state, setState] = useState<{ live: boolean; error: { title: string; detail: string } | null }>({
    live: false,
    error: null,
  });

  useEffect(() => {
    if (!follow) return;
    buffer.clear();
    setVersion((v) => v + 1);
    let pending: LogLine[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      buffer.append(pending);
      pending = [];
      setVersion((v) => v + 1);
    };
    // batch=true: lines arriving together come as one message (an array), so a burst of 10,000
    // costs the main thread a few messages rather than 10,000 (docs/api-decisions.md).
    const params = new URLSearchParams({ follow: 'true', batch: 'true', tail: String(tail) });
    if (since) params.set('since', new Date(since).toISOString());
    setState({ live: true, error: null });
    const close = openJsonSocket(`/api/services/${encodeURIComponent(serviceId)}/logs?${params}`, {
      onMessage: (message) => {
        if (message.type === 'error') {
          setState({
            live: false,
            error: { title: 'Log stream ended', detail: textOf(message, 'detail', '') },
          });
          return;
        }
        if (typeof message.message !== 'string') return;
        pending.push({
          timestamp: textOf(message, 'timestamp', ''),
          stream: textOf(message, 'stream', 'stdout'),
          message: message.message,
        });
        frame ||= requestAnimationFrame(flush);
      },
      onClose: (code) =>
        setState((current) => ({
          live: false,
          error: current.error ?? {
            title: 'Log stream closed',
            detail: `The connection closed (code ${code}).`,
          },
        })),
    });
    return () => {
      if (frame) cancelAnimationFrame(frame);
      close();
    };
  }, [serviceId, tail, since, follow, buffer]);

  useEffect(() => {
    buffer.setSearch(search);
    setVersion((v) => v + 1);
  }, [search, buffer]);

  return (
    <section aria-label="Logs">
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Lines from history
          <input
            type="number"
            min={0}
            max={10000}
            value={tail}
            onChange={(e) => setTail(Math.min(10000, Math.max(0, Number(e.target.value) || 0)))}
          />
        </label>
        <label>
          Since
          <input type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} />
        </label>
        <label>
          Search in view
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <button type="button" onClick={() => setFollow(!follow)} aria-pressed={follow}>
          Follow
        </button>
      </form>
      <p className="muted" aria-live="polite">
        {state.live ? 'Following live. ' : 'Not following. '}
        {search ? `${buffer.visibleCount} of ${buffer.size} lines match.` : `${buffer.size} lines.`}
      </p>
      {state.error ? <ProblemAlert error={state.error} /> : null}
      <LogView buffer={buffer} version={version} follow={follow} label="Log lines" />
    </section>
  );
}
