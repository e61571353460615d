import { useEffect, useRef, useState } from 'react';
import { openJsonSocket, textOf } from '../live-socket.ts';
import { LogBuffer, type LogLine } from '../logs/log-buffer.ts';
import { RunOutputLines } from './run-output-lines.ts';

/** The `end` message of the output stream: the final run's outcome. */
interface RunEnd {
  status: string;
  exitCode: number | null;
}

interface RunFollow {
  buffer: LogBuffer;
  /** Changes whenever lines were added. */
  version: number;
  end: RunEnd | null;
  /** Why the stream stopped before its end (refused, the run vanished, the connection dropped). */
  problem: { title: string; detail: string } | null;
}

/**
 * Follows a run's output over `GET /api/runs/:id/output?follow=true` (docs/jobs.md#following-a-run)
 * while `enabled`, on the socket client the deployment log uses: lines as they are printed, then
 * the end. Chunks arriving in a burst are added once per animation frame, as in the logs tab.
 * `onChange` is called at the first output (the run left `queued`) and at the end, when the run's
 * row has news its poll has not brought yet.
 */
export function useRunFollow(runId: string, enabled: boolean, onChange: () => void): RunFollow {
  const buffer = useRef(new LogBuffer()).current;
  const [version, setVersion] = useState(0);
  const [end, setEnd] = useState<RunEnd | null>(null);
  const [problem, setProblem] = useState<RunFollow['problem']>(null);
  const changeRef = useRef(onChange);
  changeRef.current = onChange;

  useEffect(() => {
    if (!enabled) return;
    buffer.clear(); // a socket opened again (StrictMode's second mount) starts from the run's start
    const lines = new RunOutputLines(buffer);
    let pending: LogLine[] = [];
    let frame = 0;
    let over = false;
    let printed = false;
    const flush = () => {
      frame = 0;
      if (!printed && pending.length > 0) {
        printed = true;
        changeRef.current();
      }
      lines.add(pending);
      pending = [];
      setVersion((v) => v + 1);
    };
    const close = openJsonSocket(`/api/runs/${encodeURIComponent(runId)}/output?follow=true`, {
      onMessage: (message) => {
        if (message.type === 'end') {
          over = true;
          if (frame) cancelAnimationFrame(frame);
          flush();
          const exitCode = message.exit_code;
          setEnd({
            status: textOf(message, 'status', 'unknown'),
            exitCode: typeof exitCode === 'number' ? exitCode : null,
          });
          changeRef.current();
        } else if (message.type === 'error') {
          over = true;
          setProblem({ title: 'Run output not available', detail: textOf(message, 'detail', '') });
        } else if (typeof message.message === 'string') {
          pending.push({
            timestamp: textOf(message, 'timestamp', ''),
            stream: textOf(message, 'stream', 'stdout'),
            message: message.message,
          });
          frame ||= requestAnimationFrame(flush);
        }
      },
      onClose: (code) => {
        if (over) return;
        setProblem({ title: 'Run output stream closed', detail: `The connection closed (code ${code}).` });
      },
    });
    return () => {
      if (frame) cancelAnimationFrame(frame);
      close();
    };
  }, [runId, enabled, buffer]);

  return { buffer, version, end, problem };
}
