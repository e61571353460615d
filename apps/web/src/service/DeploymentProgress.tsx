import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { openJsonSocket, textOf } from '../live-socket.ts';
import { LogBuffer, type LogLine } from '../logs/log-buffer.ts';
import { LogView } from '../logs/LogView.tsx';

interface Progress {
  status: string;
  step: string | null;
  error: string | null;
  ended: boolean;
  problem: { title: string; detail: string } | null;
}

/** One deployment followed over its WebSocket: status, step and log as they happen. */
export function DeploymentProgress(props: { deploymentId: string; onEnd: () => void; cancel: ReactNode }) {
  const { deploymentId, onEnd, cancel } = props;
  const buffer = useRef(new LogBuffer()).current;
  const [version, setVersion] = useState(0);
  const [progress, setProgress] = useState<Progress>({
    status: 'connecting',
    step: null,
    error: null,
    ended: false,
    problem: null,
  });
  const endRef = useRef(onEnd);
  endRef.current = onEnd;

  useEffect(() => {
    let pending: LogLine[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      buffer.append(pending);
      pending = [];
      setVersion((v) => v + 1);
    };
    const close = openJsonSocket(`/api/deployments/${encodeURIComponent(deploymentId)}`, {
      onMessage: (message) => {
        const text = (key: string) => textOf(message, key, null);
        switch (message.type) {
          case 'log':
            pending.push({
              timestamp: text('timestamp') ?? '',
              stream: text('stream') ?? 'stdout',
              message: text('message') ?? '',
            });
            frame ||= requestAnimationFrame(flush);
            break;
          case 'status':
            setProgress((p) => ({
              ...p,
              status: text('status') ?? p.status,
              step: text('step'),
              error: text('error'),
            }));
            break;
          case 'end':
            setProgress((p) => ({
              ...p,
              status: text('status') ?? p.status,
              error: text('error'),
              ended: true,
            }));
            endRef.current();
            break;
          case 'error':
            setProgress((p) => ({
              ...p,
              ended: true,
              problem: { title: 'Deployment not available', detail: text('detail') ?? '' },
            }));
            break;
        }
      },
    });
    return () => {
      if (frame) cancelAnimationFrame(frame);
      close();
    };
  }, [deploymentId, buffer]);

  return (
    <section className="card deployment-progress" aria-labelledby="progress-heading">
      <div className="page-heading">
        <h2 id="progress-heading">Deployment {deploymentId.slice(0, 8)}</h2>
        <span role="status" aria-live="polite">
          <StatusBadge status={progress.status} />
          {progress.step && !progress.ended ? <span className="muted"> step: {progress.step}</span> : null}
        </span>
        {progress.ended ? null : cancel}
      </div>
      {progress.error ? (
        <ProblemAlert error={{ title: `Deployment ${progress.status}`, detail: progress.error }} />
      ) : null}
      <ProblemAlert error={progress.problem} />
      <LogView buffer={buffer} version={version} follow label="Deployment log" />
    </section>
  );
}
