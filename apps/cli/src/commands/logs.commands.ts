import { must, type LogEntry } from '@hostctl/api-client';
import WebSocket from 'ws';
import { assertKnownFlags, integerFlag, operands, optionalFlag, UsageError } from '../args.js';
import { formatTable, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';

/**
 * `logs SERVICE [--tail N] [--since T] [--follow] [--timestamps]`: stdout lines to stdout and
 * stderr lines to stderr, like `docker logs`; --json prints the API's answer (one JSON entry per
 * line with --follow).
 */
export const logs: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['tail', 'since', 'follow', 'timestamps']);
  const [ref = ''] = operands(args, 1, ['SERVICE']);
  const since = optionalFlag(args, 'since');
  if (since !== undefined && Number.isNaN(Date.parse(since)))
    throw new UsageError('--since must be an RFC 3339 timestamp, e.g. 2026-01-31T12:00:00Z');
  const query = { tail: integerFlag(args, 'tail', 10_000), since };
  const client = context.client();
  const service = await resolveService(client, ref);
  if (args.flags.get('follow') === true) return followLogs(context, service.id, query);
  const answer = await must(
    client.api.GET('/api/services/{id}/logs', { params: { path: { id: service.id }, query } }),
  );
  if (context.json) printJson(context, answer);
  else for (const entry of answer.logs) printEntry(context, entry);
  return EXIT.ok;
};

function printEntry(context: CommandContext, entry: LogEntry): void {
  if (context.json) return context.out(JSON.stringify(entry));
  const line =
    context.args.flags.get('timestamps') === true ? `${entry.timestamp} ${entry.message}` : entry.message;
  if (entry.stream === 'stderr') context.err(line);
  else context.out(line);
}

/**
 * The WebSocket of `?follow=true`, with the bearer header on the handshake (docs/deployments.md).
 * Ends with 0 on Ctrl-C or a normal close, 5 when the credential stops being valid, 1 otherwise.
 */
async function followLogs(
  context: CommandContext,
  serviceId: string,
  query: { tail: number | undefined; since: string | undefined },
): Promise<ExitCode> {
  const client = context.client();
  const url = new URL(`${client.baseUrl.replace(/^http/, 'ws')}/api/services/${serviceId}/logs`);
  url.searchParams.set('follow', 'true');
  if (query.tail !== undefined) url.searchParams.set('tail', String(query.tail));
  if (query.since !== undefined) url.searchParams.set('since', query.since);
  const socket = new WebSocket(url, { headers: { authorization: client.authorization() } });
  let lastError: string | undefined;
  const interrupt = () => socket.close(1000);
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    return await new Promise<ExitCode>((resolve, reject) => {
      socket.on('message', (data: Buffer) => {
        const message = parseFrame(data.toString());
        if (!message) {
          // Thrown in an event handler this would crash the process; end with a message instead.
          reject(
            new CliError(
              `the log stream from ${client.baseUrl} sent a frame that is not a log entry`,
              EXIT.failed,
            ),
          );
          socket.terminate();
        } else if (message.type === 'error') lastError = message.detail ?? 'the stream ended with an error';
        else printEntry(context, message as LogEntry);
      });
      socket.once('unexpected-response', (_request, response) => {
        const status = response.statusCode ?? 0;
        reject(
          new CliError(
            `the API refused to stream logs (${status} ${response.statusMessage ?? ''})`.trimEnd(),
            status === 401 || status === 403 ? EXIT.auth : EXIT.failed,
          ),
        );
        socket.terminate();
      });
      socket.once('error', (error) =>
        reject(new CliError(`log stream to ${client.baseUrl} failed: ${error.message}`, EXIT.failed)),
      );
      socket.once('close', (code) => {
        if (code === 1000 || code === 1005) return resolve(EXIT.ok);
        const auth = code === 4401 || code === 4403;
        reject(
          new CliError(
            `log stream closed (${code})${lastError ? `: ${lastError}` : ''}`,
            auth ? EXIT.auth : EXIT.failed,
          ),
        );
      });
    });
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

type Frame = Partial<LogEntry> & { type?: string; detail?: string };

/** A frame of the stream: a JSON object with a string message, or an error; anything else is null. */
function parseFrame(text: string): Frame | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const frame = parsed as Frame;
  if (frame.type === 'error') return frame;
  return typeof frame.message === 'string' ? frame : null;
}

/** `events SERVICE`: the service's timeline (deploys, restarts, health changes). */
export const events: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = ''] = operands(context.args, 1, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const answer = await must(
    client.api.GET('/api/services/{id}/events', { params: { path: { id: service.id } } }),
  );
  if (context.json) printJson(context, answer);
  else context.out(formatTable(answer.data, ['timestamp', 'type', 'status', 'message']));
  return EXIT.ok;
};
