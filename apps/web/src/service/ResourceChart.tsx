import { useEffect, useRef } from 'react';
import type { ServiceMetrics } from '@hostctl/api-client';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/**
 * The uPlot chart of a service's resource history: average CPU (percent of one CPU, left axis)
 * and memory (MiB, right axis) per point, deployments as vertical lines. Its own module, loaded
 * lazily: uPlot is fetched when a service's overview is opened, never by the first page. The
 * canvas is decoration for sighted users; ResourceHistory gives its summary and a data table.
 */
export default function ResourceChart({ metrics }: { metrics: ServiceMetrics }) {
  const target = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = target.current;
    if (!element) return undefined;
    const times = metrics.points.map((point) => Date.parse(point.t) / 1000);
    const deployments = metrics.annotations.map((mark) => Date.parse(mark.at) / 1000);
    const range = { from: Date.parse(metrics.from) / 1000, to: Date.parse(metrics.to) / 1000 };
    const style = getComputedStyle(element);
    const color = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    const chart = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        scales: {
          // The whole range asked for, not just where samples are: gaps and deployments show.
          x: { time: true, range: (): uPlot.Range.MinMax => [range.from, range.to] },
          cpu: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        axes: [
          { stroke: color('--muted', '#555') },
          { scale: 'cpu', label: 'CPU %', stroke: color('--muted', '#555') },
          { scale: 'mb', label: 'MiB', side: 1, grid: { show: false }, stroke: color('--muted', '#555') },
        ],
        series: [
          {},
          { label: 'CPU %', scale: 'cpu', stroke: color('--accent', '#2549b8'), width: 2 },
          { label: 'Memory MiB', scale: 'mb', stroke: color('--ok', '#135c2c'), width: 2 },
        ],
        hooks: {
          // Deployments: a dashed vertical line each, under the series.
          drawAxes: [
            (u) => {
              const { ctx, bbox } = u;
              ctx.save();
              ctx.strokeStyle = color('--busy', '#1f3f9e');
              ctx.setLineDash([4, 4]);
              for (const at of deployments) {
                const x = Math.round(u.valToPos(at, 'x', true));
                if (x < bbox.left || x > bbox.left + bbox.width) continue;
                ctx.beginPath();
                ctx.moveTo(x, bbox.top);
                ctx.lineTo(x, bbox.top + bbox.height);
                ctx.stroke();
              }
              ctx.restore();
            },
          ],
        },
      },
      [
        times,
        metrics.points.map((point) => point.cpu_percent_avg),
        metrics.points.map((point) => point.memory_mb_avg),
      ],
      element,
    );
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(280, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [metrics]);

  return (
    <div ref={target} className="resource-chart" aria-hidden="true" data-points={metrics.points.length} />
  );
}
