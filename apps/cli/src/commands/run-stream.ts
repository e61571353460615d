import WebSocket from 'ws';
import type { ApiClient } from '../client/api-client.js';
import type { CommandContext } from '../client/context.js';
import { CliError, EXIT } from '../exit-codes.js';

/**
 * How following ended: `ended` (the API sent the run's end), `waited-out` (the deadline passed),
 * `broken` (the stream stopped after some output: printing the stored output again would repeat
 * it), `unavailable` (no output came: an API without the route, a proxy without WebSockets).
 */
type StreamResult = 'ended' | 'waited-out' | 'broken' | 'unavailable';

/**
 * Prints a run's output as it is printed (docs/jobs.md#following-a-run): the WebSocket of
 * `GET /api/runs/:id/output?follow=true`, with the bearer header on the handshake like `logs
 * --follow`. Output arrives in chunks, not lines, each of one of the command's streams; whole
 * lines go to the CLI's stdout or stderr as the command wrote them (`hostctl run … -- pg_dump >
 * dump.sql` keeps the command's warnings out of the file), as they complete, and a last line
 * without its newline at the end. A refused credential is exit 5, as for every request.
 */
export async function streamRunOutput(
  context: CommandContext,
  client: ApiClient,
  runId: string,
  deadline: number,
): Promise<StreamResult> {
  const url = new URL(`${client.baseUrl.replace(/^http/, 'ws')}/api/runs/${runId}/output`);
  url.searchParams.set('follow', 'true');
  const socket = new WebSocket(url, { headers: { authorization: client.authorization() } });
  // A line in progress per stream: a stdout chunk never completes a stderr line.
  const pending: Record<OutputStream, string> = { stdout: '', stderr: '' };
  const print = { stdout: context.out, stderr: context.err };
  let hasOutput = false;
  let hasEnded = false;
  return new Promise<StreamResult>((resolve, reject) => {
    let isSettled = false;
    const settle = (result: StreamResult | CliError) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      for (const stream of OUTPUT_STREAMS) {
        if (pending[stream] !== '') print[stream](pending[stream]);
        pending[stream] = '';
      }
      if (result instanceof CliError) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(
      () => {
        socket.terminate();
        settle('waited-out');
      },
      Math.max(0, deadline - Date.now()),
    );
    socket.on('message', (data: Buffer) => {
      const frame = parseFrame(data.toString());
      if (frame?.type === 'end') hasEnded = true;
      else if (typeof frame?.message === 'string') {
        hasOutput = true;
        const stream: OutputStream = frame.stream === 'stderr' ? 'stderr' : 'stdout';
        const lines = (pending[stream] + frame.message).split('\n');
        pending[stream] = lines.pop() ?? '';
        for (const line of lines) print[stream](line);
      }
    });
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      const status = response.statusCode ?? 0;
      if (status === 401 || status === 403)
        settle(new CliError(`the API refused to stream the run's output (${status})`, EXIT.auth));
      else settle('unavailable');
    });
    socket.once('error', () => settle(hasOutput ? 'broken' : 'unavailable'));
    socket.once('close', (code) => {
      if (code === 4401 || code === 4403)
        settle(
          new CliError(
            `the run's output stream closed (${code}): the credential no longer allows it`,
            EXIT.auth,
          ),
        );
      else settle(hasEnded ? 'ended' : hasOutput ? 'broken' : 'unavailable');
    });
  });
}

const OUTPUT_STREAMS = ['stdout', 'stderr'] as const;
type OutputStream = (typeof OUTPUT_STREAMS)[number];

function parseFrame(text: string): { type?: unknown; stream?: unknown; message?: unknown } | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? parsed : null;
  } catch {
    return null;
  }
}
