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
 * --follow`. Output arrives in chunks, not lines; whole lines go to stdout as they complete, and
 * a last line without its newline at the end. A refused credential is exit 5, as for every request.
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
  let pending = '';
  let hasOutput = false;
  let hasEnded = false;
  return new Promise<StreamResult>((resolve, reject) => {
    let isSettled = false;
    const settle = (result: StreamResult | CliError) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      if (pending !== '') context.out(pending);
      pending = '';
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
        const lines = (pending + frame.message).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) context.out(line);
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

function parseFrame(text: string): { type?: unknown; message?: unknown } | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? parsed : null;
  } catch {
    return null;
  }
}
