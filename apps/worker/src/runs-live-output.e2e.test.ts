import { randomUUID } from 'node:crypto';
import { createRedis, runOutputStreamKey } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForDeployment } from './testing/fixtures.js';
import { TEST_REDIS_URL } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// A run's output while it runs (docs/jobs.md#output): the worker writes it into the run's Redis
// stream, which the API follows as it follows the application log. The follower here reads the
// stream the way the API does (XREAD BLOCK from the start) and notes what it saw while the run's
// row still said `running`.
const worker = useWorkerApp('runs-live', {
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
});
const { db, app, prefix } = worker;
const redis = createRedis(TEST_REDIS_URL, 'worker');
const secret = `planted-${randomUUID()}`;
let serviceId = '';
/** Docker cuts a line into messages of 16 KiB; the secret starts 4 bytes before the cut. */
const PADDING = 16 * 1024 - 4;
const expected = `first\ns=***\n${'x'.repeat(PADDING)}***\n`;

beforeAll(async () => {
  const service = await worker.deploy({
    compose:
      'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "2147483647"]\n' +
      '    environment:\n      SECRET: ${SECRET}\n',
    variables: { SECRET: secret },
    secretNames: { SECRET: new Date().toISOString() },
  });
  serviceId = service.serviceId;
  expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
}, 120_000);

afterAll(() => redis.disconnect());

interface Seen {
  fields: Record<string, string>;
  /** The run's status in PostgreSQL when the follower received the entry. */
  runStatus: string;
}

/** Reads the run's stream from its start until the end entry, as the API's follower does. */
async function follow(runId: string, deadline = Date.now() + 60_000): Promise<Seen[]> {
  const reader = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  const seen: Seen[] = [];
  let lastId = '0-0';
  try {
    while (Date.now() < deadline) {
      const result = await reader.xread('BLOCK', 1000, 'STREAMS', runOutputStreamKey(prefix, runId), lastId);
      for (const [id, flat] of result?.[0]?.[1] ?? []) {
        lastId = id;
        const fields: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] ?? ''] = flat[i + 1] ?? '';
        const row = await db.serviceRun.findUniqueOrThrow({ where: { id: runId } });
        seen.push({ fields, runStatus: row.status });
        if (fields.end !== undefined) return seen;
      }
    }
    throw new Error(`no end entry for run ${runId}; seen: ${JSON.stringify(seen)}`);
  } finally {
    reader.disconnect();
  }
}

describe('a run’s output while it runs', () => {
  it('reaches a follower before the run ends, masked, and ends with the exit code', async () => {
    // The secret is printed whole, then across Docker's 16 KiB message bound: the engine sends
    // the line as two frames, the secret's start in one and its end in the next.
    const command = [
      'sh',
      '-c',
      `echo first; sleep 2; echo "s=$SECRET"; head -c ${PADDING} /dev/zero | tr '\\0' x; echo "$SECRET"; exit 3`,
    ];
    const run = await db.serviceRun.create({ data: { serviceId, command, timeoutSeconds: 60 } });
    const following = follow(run.id);
    await app.producer.enqueue('run', { runId: run.id });
    const seen = await following;

    const output = seen.filter((entry) => entry.fields.end === undefined);
    expect(output[0]?.fields).toMatchObject({ stream: 'stdout', message: 'first\n' });
    // Seen live: the row still said running when the first line arrived.
    expect(output[0]?.runStatus).toBe('running');
    const text = output.map((entry) => entry.fields.message).join('');
    expect(text).toBe(expected);
    for (const entry of output) expect(entry.fields.message).not.toContain('planted');
    expect(seen.at(-1)?.fields).toMatchObject({ end: 'failed', exit_code: '3' });
    expect(seen.at(-1)?.runStatus).toBe('failed');

    // The stored log of the finished run is what it was before streaming.
    const stored = await db.serviceRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(stored).toMatchObject({ status: 'failed', exitCode: 3, output: expected });
  });
});
