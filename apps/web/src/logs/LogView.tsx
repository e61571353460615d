import { useLayoutEffect, useRef, useState } from 'react';
import type { LogBuffer } from './log-buffer.ts';
import { isAtBottom, rowWindow } from './virtual-window.ts';

const ROW_HEIGHT = 20;

interface LogViewProps {
  buffer: LogBuffer;
  /** Changes whenever the buffer's content or search changes. */
  version: number;
  /** Keep the newest line in view as lines arrive (until the user scrolls up). */
  follow: boolean;
  label: string;
  /** Shown while there is no line to show. */
  empty?: string;
}

/** A virtualised log: only the rows in view are in the DOM, whatever the number of lines. */
export function LogView({ buffer, version, follow, label, empty = 'No log lines yet.' }: LogViewProps) {
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(400);
  const stuckToBottom = useRef(true);
  const count = buffer.visibleCount;

  useLayoutEffect(() => {
    const element = viewport.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // New lines while following: jump to the end before the browser paints.
  useLayoutEffect(() => {
    const element = viewport.current;
    if (!element || !follow || !stuckToBottom.current) return;
    element.scrollTop = element.scrollHeight;
    setScrollTop(element.scrollTop);
  }, [version, follow, count]);

  const view = rowWindow({ scrollTop, viewportHeight: height, rowHeight: ROW_HEIGHT, count });
  const rows = [];
  for (let index = view.start; index < view.end; index++) {
    const line = buffer.at(index);
    if (!line) continue;
    rows.push(
      <div key={index} className={line.stream === 'stderr' ? 'log-row stderr' : 'log-row'}>
        <span className="log-time">{line.timestamp.slice(11, 23)}</span> {line.message}
      </div>,
    );
  }

  return (
    <div
      ref={viewport}
      className="log-view"
      role="region"
      aria-label={label}
      tabIndex={0}
      onScroll={(event) => {
        const element = event.currentTarget;
        stuckToBottom.current = isAtBottom(element.scrollTop, element.clientHeight, view.total, ROW_HEIGHT);
        setScrollTop(element.scrollTop);
      }}
    >
      {count === 0 ? <p className="log-empty muted">{empty}</p> : null}
      <div className="log-space" style={{ height: view.total }}>
        <div className="log-rows" style={{ transform: `translateY(${view.offset}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
