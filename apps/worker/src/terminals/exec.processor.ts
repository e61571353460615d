import { StringDecoder } from 'node:string_decoder';
import type { Job } from 'bullmq';
import type { ExecSessionsStore } from '@hostctl/db';
import { EXEC_PING_MS, EXEC_STREAM_TTL_SECONDS, execStreamKeys, type JobPayload } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { TerminalUnavailable, type ExecProcess } from '../adapters/terminal-exec.js';
import type { RuntimeDriver } from '../runtime/driver.js';

/** Output is shipped at most this often, in pieces of at most this much. */
const FLUSH_MS = 20;
const MAX_CHUNK_CHARS = 16 * 1024;
/** A session older than this when a worker takes it has lost its client already. */
const STALE_AFTER_MS = 30_000;

interface ExecProcessorDeps {
  sessions: Pick<ExecSessionsStore, 'findById' | 'markOpened' | 'close'>;
  /** Where the container is and how the exec opens in it: this engine, or the node of a Swarm task. */
  driver: Pick<RuntimeDriver, 'terminals'>;
  redis: Redis;
  prefix: string;
  logger: Logger;
}

/**
 * Holds one terminal (docs/jobs.md#terminal): opens an exec with a TTY in a running container of the
 * session's component (the driver's: this engine's, or a running Swarm task's on its node), relays the API's input stream into it and its output back, and records the
 * container and the exit code. Typed input is never logged or stored.
 */
export function createExecProcessor(deps: ExecProcessorDeps) {
  const { sessions, redis } = deps;
  return async (job: Job<JobPayload<'exec'>>): Promise<{ status: string }> => {
    const session = await sessions.findById(job.data.execSessionId);
    if (!session || session.closedAt || session.openedAt) return { status: 'gone' };
    const keys = execStreamKeys(deps.prefix, session.id);
    const write = async (fields: string[]) => {
      await redis
        .multi()
        .xadd(keys.output, 'MAXLEN', '~', 2000, '*', ...fields)
        .expire(keys.output, EXEC_STREAM_TTL_SECONDS)
        .exec();
    };
    const fail = async (detail: string) => {
      await sessions.close(session.id, { exitCode: null, error: detail });
      await write(['t', 'error', 'detail', detail]);
      return { status: 'failed' };
    };
    if (Date.now() - session.createdAt.getTime() > STALE_AFTER_MS)
      return fail('the terminal waited too long for a worker');
    const { terminals } = deps.driver;
    let container: { id: string; name: string };
    try {
      container = await terminals.find(session.serviceId, session.component);
    } catch (error) {
      return fail(detailOf(error, 'cannot find a container for the terminal'));
    }
    if (!(await sessions.markOpened(session.id, container.name))) return { status: 'gone' };

    let process: ExecProcess;
    try {
      process = await terminals.open(container.id, session.command);
    } catch (error) {
      deps.logger.warn(
        { execSessionId: session.id, err: (error as Error).message },
        'terminal could not open',
      );
      return fail(detailOf(error, 'the engine refused the exec'));
    }
    deps.logger.info({ execSessionId: session.id, container: container.name }, 'terminal opened');
    await write(['t', 'ready', 'container', container.name]);

    const outputDone = shipOutput(process, write);
    const inputDone = relayInput(process, redis, keys.input);
    await outputDone;
    inputDone.stop();
    const exitCode = await exitCodeOf(process);
    await write(['t', 'exit', 'code', exitCode === null ? '' : String(exitCode)]);
    await sessions.close(session.id, { exitCode, error: null });
    deps.logger.info({ execSessionId: session.id, exitCode }, 'terminal closed');
    return { status: 'closed' };
  };
}

/** A TerminalUnavailable says why as it is; anything else is the engine's failure, in context. */
function detailOf(error: unknown, context: string): string {
  const message = (error as Error).message;
  return error instanceof TerminalUnavailable ? message : `${context}: ${message}`;
}

/** Ships the TTY's output as it comes (a prompt without a newline included), until the exec ends. */
function shipOutput(process: ExecProcess, write: (fields: string[]) => Promise<void>): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  let chain = Promise.resolve();
  const flush = () => {
    timer = undefined;
    while (pending !== '') {
      const piece = pending.slice(0, MAX_CHUNK_CHARS);
      pending = pending.slice(piece.length);
      chain = chain.then(() => write(['t', 'output', 'd', piece])).catch(() => undefined);
    }
  };
  return new Promise((resolve) => {
    process.stream.on('data', (chunk: Buffer) => {
      pending += decoder.write(chunk);
      timer ??= setTimeout(flush, FLUSH_MS);
    });
    const end = () => {
      clearTimeout(timer);
      pending += decoder.end();
      flush();
      void chain.then(resolve);
    };
    process.stream.once('end', end);
    process.stream.once('close', end);
    process.stream.once('error', end);
  });
}

/**
 * Relays the API's frames into the exec until a `close`, or until the API side has been silent for
 * three pings (its replica died): then the TTY is hung up, which ends the exec's stream.
 */
function relayInput(process: ExecProcess, redis: Redis, key: string): { stop(): void } {
  const reader = redis.duplicate({ maxRetriesPerRequest: null, commandTimeout: undefined });
  let stopped = false;
  const hangUp = () => process.stream.destroy();
  void (async () => {
    let lastId = '0-0';
    let heardAt = Date.now();
    while (!stopped) {
      const result = await reader
        .xread('COUNT', 500, 'BLOCK', 2000, 'STREAMS', key, lastId)
        .catch(() => null);
      const rows = result?.[0]?.[1] ?? [];
      if (rows.length > 0) heardAt = Date.now();
      else if (Date.now() - heardAt > 3 * EXEC_PING_MS) return hangUp();
      for (const [id, raw] of rows) {
        lastId = id;
        const fields = new Map<string, string>();
        for (let i = 0; i + 1 < raw.length; i += 2) fields.set(raw[i]!, raw[i + 1]!);
        const type = fields.get('t');
        if (type === 'stdin') process.stream.write(fields.get('d') ?? '');
        if (type === 'resize')
          await process.resize(Number(fields.get('c')), Number(fields.get('r'))).catch(() => undefined);
        if (type === 'close') return hangUp();
      }
    }
  })().finally(() => reader.disconnect());
  return {
    stop() {
      stopped = true;
      reader.disconnect();
    },
  };
}

/** The engine records the exit code a moment after the stream ends. */
async function exitCodeOf(process: ExecProcess): Promise<number | null> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const code = await process.exitCode().catch(() => null);
    if (code !== null) return code;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}
