import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceLogStreamKey } from '@hostctl/queue';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { openSocket } from '../../test-support/ws-client.js';

// The worker's shipper is simulated by writing to the real Redis stream the API reads.
let h: Harness;
let operator: { auth: string };
let outsider: { auth: string };
let base: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  outsider = await h.user('operator', (await h.customer()).id);
  base = await h.listen();
});
afterAll(async () => h.close());

const service = async () => (await h.createService(operator.auth)).id;

const ship = (serviceId: string, message: string, stream = 'stdout', ts = new Date().toISOString()) =>
  h.container.redis.xadd(
    serviceLogStreamKey(h.config.QUEUE_PREFIX, serviceId),
    '*',
    'ts',
    ts,
    'stream',
    stream,
    'message',
    message,
  );

const logs = (id: string, query = '', auth = operator.auth) =>
  h.app.inject({ url: `/api/services/${id}/logs${query}`, headers: { authorization: auth } });

describe('GET /api/services/:id/logs', () => {
  it('returns the last lines oldest first, stdout and stderr distinguished', async () => {
    const id = await service();
    for (let i = 1; i <= 5; i++) await ship(id, `line ${i}`, i === 4 ? 'stderr' : 'stdout');
    const body = json<{ logs: { message: string; stream: string; timestamp: string }[] }>(
      await logs(id, '?tail=3'),
    );
    expect(body.logs.map((l) => l.message)).toEqual(['line 3', 'line 4', 'line 5']);
    expect(body.logs[1]?.stream).toBe('stderr');
    expect(Date.parse(body.logs[0]!.timestamp)).not.toBeNaN();
  });

  it('defaults to 100 lines', async () => {
    const id = await service();
    for (let i = 0; i < 120; i++) await ship(id, `n${i}`);
    expect(json<{ logs: unknown[] }>(await logs(id)).logs).toHaveLength(100);
  });

  it('since keeps only later lines', async () => {
    const id = await service();
    await ship(id, 'old');
    await new Promise((r) => setTimeout(r, 30));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await ship(id, 'new');
    const body = json<{ logs: { message: string }[] }>(await logs(id, `?since=${encodeURIComponent(since)}`));
    expect(body.logs.map((l) => l.message)).toEqual(['new']);
  });

  it('since is about when a line was written, not when it arrived (lines backfilled after a gap)', async () => {
    const id = await service();
    const since = new Date();
    await new Promise((r) => setTimeout(r, 5));
    await ship(id, 'written after since');
    // Arrives now, written a minute ago: the shipper caught up after losing the container's log.
    await ship(
      id,
      'backfilled, written before since',
      'stdout',
      new Date(since.getTime() - 60_000).toISOString(),
    );
    for (let i = 0; i < 3; i++) await ship(id, `recent ${i}`);
    const body = json<{ logs: { message: string }[] }>(
      await logs(id, `?since=${encodeURIComponent(since.toISOString())}&tail=4`),
    );
    expect(body.logs.map((l) => l.message)).toEqual([
      'written after since',
      'recent 0',
      'recent 1',
      'recent 2',
    ]);
  });

  it('an empty stream gives an empty list', async () => {
    expect(json(await logs(await service()))).toEqual({ logs: [] });
  });

  it.each(['?since=yesterday', '?tail=-1', '?tail=10001', '?tail=abc', '?follow=maybe'])(
    '%s → 400',
    async (query) => {
      const response = await logs(await service(), query);
      expect(response.statusCode).toBe(400);
      expect(json(response).code).toBe('validation_failed');
    },
  );

  it("another customer's service → 404", async () => {
    expect((await logs(await service(), '', outsider.auth)).statusCode).toBe(404);
  });
});

describe('GET /api/services/:id/logs?follow=true (WebSocket)', () => {
  it('sends the recent lines, then live ones', async () => {
    const id = await service();
    await ship(id, 'before');
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true&tail=10`, {
      authorization: operator.auth,
    });
    await ws.opened;
    await ws.waitFor((m) => m.length === 1);
    await ship(id, 'live one', 'stderr');
    await ws.waitFor((m) => m.length === 2);
    expect(ws.messages[0]).toMatchObject({ message: 'before', stream: 'stdout' });
    expect(ws.messages[1]).toMatchObject({
      message: 'live one',
      stream: 'stderr',
      timestamp: expect.any(String),
    });
    ws.socket.close();
  });

  it('refuses the upgrade without a credential (401 before the handshake)', async () => {
    const id = await service();
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true`, {});
    await expect(ws.opened).rejects.toThrow(/401/);
  });

  it("ends with a not_found error for another customer's service", async () => {
    const id = await service();
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true`, {
      authorization: outsider.auth,
    });
    await ws.opened.catch(() => undefined);
    await ws.closed;
    expect(ws.messages.at(-1)).toMatchObject({ type: 'error', code: 'not_found' });
  });

  it('closes the stream when the service is deleted', async () => {
    const id = await service();
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true`, {
      authorization: operator.auth,
    });
    await ws.opened;
    await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${id}`,
      headers: { authorization: operator.auth },
    });
    await ws.closed;
    expect(ws.messages.at(-1)).toMatchObject({ type: 'error', code: 'not_found' });
  }, 20_000);
});

describe('GET /api/services/:id/logs?follow=true&batch=true (the dashboard’s batched form)', () => {
  const entriesOf = (messages: Record<string, unknown>[]) =>
    messages.flatMap((message) => (Array.isArray(message) ? (message as { message: string }[]) : []));

  it('sends arrays of entries: a burst of history in a few messages, in order, none lost', async () => {
    const id = await service();
    const count = 1_200;
    const pipeline = h.container.redis.pipeline();
    const key = serviceLogStreamKey(h.config.QUEUE_PREFIX, id);
    for (let i = 0; i < count; i++)
      pipeline.xadd(key, '*', 'ts', new Date().toISOString(), 'stream', 'stdout', 'message', `line ${i}`);
    await pipeline.exec();
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true&batch=true&tail=${count}`, {
      authorization: operator.auth,
    });
    await ws.opened;
    await ws.waitFor((messages) => entriesOf(messages).length === count);
    expect(ws.messages.every((message) => Array.isArray(message))).toBe(true);
    // At most 500 entries a message: 1,200 lines of history are 3 messages, not 1,200.
    expect(ws.messages.length).toBeGreaterThanOrEqual(3);
    expect(ws.messages.length).toBeLessThan(20);
    expect(entriesOf(ws.messages).map((entry) => entry.message)).toEqual(
      Array.from({ length: count }, (_, i) => `line ${i}`),
    );

    await ship(id, 'live one', 'stderr');
    await ws.waitFor((messages) => entriesOf(messages).length === count + 1);
    expect(entriesOf(ws.messages).at(-1)).toMatchObject({
      message: 'live one',
      stream: 'stderr',
      timestamp: expect.any(String),
    });
    ws.socket.close();
  });

  it('without batch each message stays one entry object (the contract’s form)', async () => {
    const id = await service();
    for (let i = 0; i < 3; i++) await ship(id, `plain ${i}`);
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true&tail=3`, {
      authorization: operator.auth,
    });
    await ws.opened;
    await ws.waitFor((messages) => messages.length === 3);
    expect(ws.messages.map((message) => [Array.isArray(message), message.message])).toEqual([
      [false, 'plain 0'],
      [false, 'plain 1'],
      [false, 'plain 2'],
    ]);
    ws.socket.close();
  });

  it("a batched stream of another customer's service still ends with not_found", async () => {
    const id = await service();
    await ship(id, 'secret line');
    const ws = openSocket(`ws://${base}/api/services/${id}/logs?follow=true&batch=true`, {
      authorization: outsider.auth,
    });
    await ws.opened.catch(() => undefined);
    await ws.closed;
    expect(JSON.stringify(ws.messages)).not.toContain('secret line');
    expect(ws.messages.at(-1)).toMatchObject({ type: 'error', code: 'not_found' });
  });

  it('batch=maybe → 400', async () => {
    const response = await logs(await service(), '?follow=true&batch=maybe');
    expect(response.statusCode).toBe(400);
    expect(json(response).code).toBe('validation_failed');
  });
});
