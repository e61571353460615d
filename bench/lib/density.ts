import { performance } from 'node:perf_hooks';
import { SERVICE_LABEL } from '@hostctl/domain';
import WebSocket from 'ws';
import { docker } from './docker.js';
import { awaitDeployment, createService, type Api } from './services-api.js';

/**
 * Deploys services until `ids` holds `total`, spread over the customers in turn (each customer's
 * containers quota is 100 by default), `parallel` creates at a time; throws on a failed deploy.
 */
export async function growTo(
  api: Api,
  customerIds: string[],
  ids: string[],
  total: number,
  parallel = 8,
): Promise<void> {
  let next = ids.length;
  const lane = async () => {
    while (next < total) {
      const index = next++;
      const created = await createService(api, customerIds[index % customerIds.length]!);
      ids.push(created.id);
      const deployment = await awaitDeployment(api, created.deploymentId, 300);
      if (deployment.status !== 'succeeded')
        throw new Error(`deploy of ${created.id} ended ${deployment.status}: ${deployment.error ?? ''}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
}

/** One Prometheus text scrape as `name{labels}` → value (the worker's /metrics). */
export async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

/** Per periodic task: its last sweep and its interval, in seconds (hostctl_periodic_*). */
export function periodicSweeps(
  metrics: Map<string, number>,
): Map<string, { last: number; interval: number }> {
  const sweeps = new Map<string, { last: number; interval: number }>();
  for (const [key, value] of metrics) {
    const match = /^hostctl_periodic_sweep_last_seconds\{task="([^"]+)"\}$/.exec(key);
    if (!match) continue;
    const interval = metrics.get(`hostctl_periodic_interval_seconds{task="${match[1]}"}`) ?? Number.NaN;
    sweeps.set(match[1]!, { last: value, interval });
  }
  return sweeps;
}

/** Mean reconciler sweep between two scrapes (its histogram's sum and count), in seconds. */
export function meanReconcilerSweep(before: Map<string, number>, after: Map<string, number>): number {
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const count = delta('hostctl_reconciler_sweep_duration_seconds_count');
  return count > 0 ? delta('hostctl_reconciler_sweep_duration_seconds_sum') / count : Number.NaN;
}

/**
 * Log line → live socket: follows the service's logs over the API's WebSocket and, `samples`
 * times, writes a marker line to its container's stdout (an exec writing to PID 1's stdout, so
 * Docker's log driver sees it as the service's own output) and times until the socket delivers
 * it. Each latency includes starting the exec (tens of ms), the same at every service count.
 */
export async function logLatencies(api: Api, serviceId: string, samples: number): Promise<number[]> {
  const [container] = await docker.listContainers({
    filters: JSON.stringify({ label: [`${SERVICE_LABEL}=${serviceId}`], status: ['running'] }),
  });
  if (!container) throw new Error(`no running container of service ${serviceId}`);
  const url = `${api.url.replace(/^http/, 'ws')}/api/services/${serviceId}/logs?follow=true&tail=1`;
  const socket = new WebSocket(url, { headers: { authorization: api.authorization } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const waiting = new Map<string, () => void>();
  socket.on('message', (data: Buffer) => {
    for (const [marker, arrived] of waiting) if (data.toString().includes(marker)) arrived();
  });
  try {
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const marker = `hostctl-density-${Date.now()}-${i}`;
      const arrived = new Promise<void>((resolve) => waiting.set(marker, resolve));
      const startedAt = performance.now();
      const exec = await docker.getContainer(container.Id).exec({
        Cmd: ['sh', '-c', `echo ${marker} > /proc/1/fd/1`],
      });
      await exec.start({ Detach: true });
      await Promise.race([
        arrived,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`log line ${marker} not delivered in 30 s`)), 30_000),
        ),
      ]);
      latencies.push(performance.now() - startedAt);
      waiting.delete(marker);
    }
    return latencies;
  } finally {
    socket.terminate();
  }
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
