import { lazy, Suspense, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { must, type ServiceMetrics } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ListState } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';

// uPlot and the chart are one chunk, fetched when an overview opens (docs/web-app.md).
const ResourceChart = lazy(() => import('./ResourceChart.tsx'));

/** The ranges offered, each at a resolution that keeps the table under 100-odd rows. */
const RANGES = {
  day: { label: 'Last 24 hours', hours: 24, resolution: '15m' },
  week: { label: 'Last 7 days', hours: 168, resolution: '1h' },
} as const;
type Range = keyof typeof RANGES;

/**
 * A service's resource history (docs/health-and-resources.md#history): a chart of CPU and memory
 * with its deployments, a text summary that names what the chart shows, and every point in a
 * table for screen readers and anyone who wants the figures.
 */
export function ResourceHistory({ serviceId }: { serviceId: string }) {
  const [range, setRange] = useState<Range>('day');
  const { hours, resolution } = RANGES[range];
  const metrics = useQuery({
    queryKey: ['services', serviceId, 'metrics', range],
    queryFn: () => {
      const to = new Date();
      const from = new Date(to.getTime() - hours * 3_600_000);
      return must(
        api.GET('/api/services/{id}/metrics', {
          params: {
            path: { id: serviceId },
            query: { from: from.toISOString(), to: to.toISOString(), resolution },
          },
        }),
      );
    },
    refetchInterval: 60_000,
  });

  return (
    <section className="card" aria-labelledby="history-heading">
      <div className="row">
        <h2 id="history-heading">Resource history</h2>
        <label>
          Range{' '}
          <select value={range} onChange={(event) => setRange(event.target.value as Range)}>
            {Object.entries(RANGES).map(([value, option]) => (
              <option key={value} value={value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ListState
        noun="resource history"
        isPending={metrics.isPending}
        error={metrics.error}
        isEmpty={!metrics.data?.points.length}
        empty="No samples in this range yet: the worker samples running services every 30 seconds."
      >
        {metrics.data ? <HistoryFigure metrics={metrics.data} /> : null}
      </ListState>
    </section>
  );
}

function HistoryFigure({ metrics }: { metrics: ServiceMetrics }) {
  return (
    <figure className="history">
      <Suspense
        fallback={
          <div aria-busy="true" className="muted state">
            Loading the chart…
          </div>
        }
      >
        <ResourceChart metrics={metrics} />
      </Suspense>
      <figcaption>{summaryOf(metrics)}</figcaption>
      <details>
        <summary>Data table</summary>
        <table>
          <caption className="visually-hidden">Resource history per {metrics.resolution}</caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">CPU % (avg / max)</th>
              <th scope="col">Memory MiB (avg / max)</th>
              <th scope="col">Network in / out</th>
              <th scope="col">Restarts</th>
            </tr>
          </thead>
          <tbody>
            {metrics.points.map((point) => (
              <tr key={point.t}>
                <th scope="row">{dateTime(point.t)}</th>
                <td>
                  {point.cpu_percent_avg} / {point.cpu_percent_max}
                </td>
                <td>
                  {point.memory_mb_avg} / {point.memory_mb_max}
                </td>
                <td>
                  {bytes(point.network_rx_bytes)} / {bytes(point.network_tx_bytes)}
                </td>
                <td>
                  {point.oom_kills > 0
                    ? `${point.restarts} (${point.oom_kills} out of memory)`
                    : point.restarts}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** What the chart shows, in words: the figure's caption, read by screen readers too. */
function summaryOf(metrics: ServiceMetrics): string {
  const { points } = metrics;
  const samples = points.reduce((sum, point) => sum + point.samples, 0);
  const cpuAvg = points.reduce((sum, point) => sum + point.cpu_percent_avg * point.samples, 0) / samples;
  const cpuMax = Math.max(...points.map((point) => point.cpu_percent_max));
  const memoryMax = Math.max(...points.map((point) => point.memory_mb_max));
  const limit = Math.max(...points.map((point) => point.memory_limit_mb));
  const restarts = points.reduce((sum, point) => sum + point.restarts, 0);
  const deployments = metrics.annotations.length;
  return (
    `CPU averaged ${cpuAvg.toFixed(1)} % of one CPU (peak ${cpuMax} %); memory peaked at ${memoryMax} MiB` +
    (limit > 0 ? ` of ${limit} MiB` : '') +
    `; ${restarts} restart${restarts === 1 ? '' : 's'}; ${deployments} deployment${deployments === 1 ? '' : 's'} (dashed lines).`
  );
}

function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 ** 2) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 ** 2).toFixed(1)} MiB`;
}
