import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { apiClient } from '@hostctl/testing';
import { eventually } from './client.js';
import { TEST_IMAGE } from './env.js';
import { startStack, type Stack } from './stack.js';

/**
 * Container output, health and resources through real processes: the worker ships a container's
 * stdout/stderr into Redis, the API serves it as a snapshot and over a WebSocket, and the
 * service detail shows the health and usage the worker measured.
 */
let stack: Stack;
let api: ReturnType<typeof apiClient>;
let key: string;
let customerId: string;

interface Entry {
  timestamp: string;
  stream: string;
  message: string;
  type?: string;
  code?: string;
}

interface Detail {
  status: string;
  health: { status: string; last_check: string | null; consecutive_failures: number };
  resources: { cpu_usage: number; memory_usage_mb: number; memory_limit_mb: number; storage_mb: number };
}

// Serves HTTP on 8080 (httpd daemonises) and prints a numbered line to each stream 5 times a second.
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "httpd -p 8080 -h /www; i=0; while true; do echo out $$i; echo err $$i >&2; i=$$((i+1)); sleep 0.2; done"]
    ports: ["8080"]
`;

beforeAll(async () => {
  stack = await startStack({ extraEnv: { HEALTH_INTERVAL_MS: '1000', RESOURCE_INTERVAL_MS: '2000' } });
  const customer = await stack.cli('customers', 'create', '--name', `e2e-logs-${Date.now()}`);
  customerId = customer.id as string;
  const email = `logs-${Date.now()}@e2e.test`;
  await stack.cli(
    'users',
    'create',
    '--email',
    email,
    '--name',
    'Logs',
    '--role',
    'operator',
    '--customer',
    customerId,
  );
  key = (await stack.cli('api-keys', 'create', '--email', email, '--name', 'logs')).key as string;
  api = apiClient(stack.apiUrl, key);
});
afterAll(async () => stack?.stop());

/** A follower socket that records every message with the time it arrived. */
function follow(id: string, query: string) {
  const url = `${stack.apiUrl.replace('http', 'ws')}/api/services/${id}/logs?follow=true&${query}`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  const received: { entry: Entry; at: number }[] = [];
  socket.on('message', (data: Buffer) =>
    received.push({ entry: JSON.parse(data.toString()) as Entry, at: Date.now() }),
  );
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
  return { socket, received, opened, closed };
}

const counters = (entries: Entry[], stream: string) =>
  entries.filter((e) => e.stream === stream).map((e) => Number(e.message.split(' ')[1]));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

describe('logs, health and resources of a running service', () => {
  let id: string;

  it('deploys a service that prints to stdout and stderr', async () => {
    const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
      name: `logs-${Date.now().toString(36)}`,
      customer_id: customerId,
      deploy_method: 'compose',
      compose: COMPOSE,
    });
    expect(created.status).toBe(201);
    id = created.body.id;
    const deployment = await api.get<{ status: string }>(
      `/api/deployments/${created.body.deploy_job_id}?wait=90`,
    );
    expect(deployment.body.status).toBe('succeeded');
  });

  it('answers a tail snapshot with both streams', async () => {
    const logs = await eventually(
      async () => (await api.get<{ logs: Entry[] }>(`/api/services/${id}/logs?tail=5`)).body.logs,
      (entries) => entries.length === 5,
      15_000,
    );
    expect(new Set(logs.map((entry) => entry.stream))).toEqual(new Set(['stdout', 'stderr']));
    for (const entry of logs) {
      expect(entry.message).toMatch(/^(out|err) \d+$/);
      expect(Date.parse(entry.timestamp)).not.toBeNaN();
    }
  });

  it('follows over a WebSocket: recent lines, then live ones without a gap', async () => {
    const follower = follow(id, 'tail=4');
    await follower.opened;
    await eventually(
      async () => follower.received.length,
      (count) => count >= 4 + 40,
      20_000,
    );
    follower.socket.close();
    const entries = follower.received.map((item) => item.entry);
    for (const stream of ['stdout', 'stderr']) {
      const numbers = counters(entries, stream);
      expect(numbers).toEqual(numbers.map((_, index) => numbers[0]! + index));
    }
    // Live lines only: Docker's timestamp of the line → arrival at this client (same host clock).
    const latencies = follower.received.slice(4).map((item) => item.at - Date.parse(item.entry.timestamp));
    console.log(
      `log line → WebSocket latency over ${latencies.length} lines: p50 ${percentile(latencies, 50)} ms, ` +
        `p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms`,
    );
  });

  it('shows health and resources measured by the worker in the detail, and a healthy event', async () => {
    const detail = await eventually(
      async () => (await api.get<Detail>(`/api/services/${id}`)).body,
      (body) => body.health.status === 'healthy' && body.resources.memory_usage_mb > 0,
      30_000,
    );
    expect(detail.health.consecutive_failures).toBe(0);
    expect(Date.now() - Date.parse(detail.health.last_check!)).toBeLessThan(15_000);
    const events = await api.get<{ data: { type: string; status: string; message: string }[] }>(
      `/api/services/${id}/events?per_page=100`,
    );
    expect(events.body.data).toContainEqual(
      expect.objectContaining({
        type: 'health',
        status: 'healthy',
        message: 'Service is healthy: container web accepts connections on port 8080',
      }),
    );
  });

  it('reports unknown health and no usage once stopped', async () => {
    expect((await api.post(`/api/services/${id}/stop`)).body).toMatchObject({ status: 'stopped' });
    const detail = await eventually(
      async () => (await api.get<Detail>(`/api/services/${id}`)).body,
      (body) => body.health.status === 'unknown' && body.resources.memory_usage_mb === 0,
      15_000,
    );
    expect(detail.status).toBe('stopped');
  });

  it('closes a follower when the service is deleted', async () => {
    const follower = follow(id, 'tail=1');
    await follower.opened;
    expect((await api.delete(`/api/services/${id}`)).status).toBe(204);
    expect(await follower.closed).toBe(4404);
    expect(follower.received.at(-1)?.entry).toMatchObject({ type: 'error', code: 'not_found' });
  });
});
