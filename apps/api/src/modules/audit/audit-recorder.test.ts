import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { NewAuditEvent } from '@hostctl/db';
import { createAuditRecorder } from './audit-recorder.js';

const event: NewAuditEvent = {
  actorType: 'api_key',
  actorUserId: 'u1',
  actorApiKeyId: 'k1',
  actorCustomerId: null,
  actorSeesAll: true,
  method: 'POST',
  route: '/api/services/:id/redeploy',
  action: 'services.redeploy',
  targetType: 'service',
  targetId: 's1',
  statusCode: 200,
  errorCode: null,
  sourceAddress: '127.0.0.1',
  requestId: 'r1',
};

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

describe('the audit recorder', () => {
  it('logs a failed insert at error level with the whole event, and never throws', async () => {
    const { log, lines } = capturingLogger();
    const recorder = createAuditRecorder({
      store: { record: () => Promise.reject(new Error('database is down')) },
    });
    expect(() => recorder.record(event, log)).not.toThrow();
    await recorder.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'audit event not recorded', auditEvent: event });
  });

  it('flush waits for the writes in flight', async () => {
    const written: string[] = [];
    let release = () => undefined as void;
    const recorder = createAuditRecorder({
      store: {
        record: (e) =>
          new Promise<void>((resolve) => {
            release = () => {
              written.push(e.requestId);
              resolve();
            };
          }),
      },
    });
    recorder.record(event, pino({ level: 'silent' }));
    const flushed = recorder.flush().then(() => [...written]);
    release();
    expect(await flushed).toEqual(['r1']);
  });
});
