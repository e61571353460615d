import { assertKnownFlags, optionalFlag, UsageError } from '../args.js';
import type { ClientCommand } from '../client/context.js';
import { resolveService, UUID } from '../client/resolve-service.js';
import { relayTerminal, type TerminalIo } from './exec-session.js';

/**
 * `exec SERVICE [--component C] [-- CMD ARGS…]` (docs/jobs.md#terminal): a terminal into one
 * running container of the service (default `/bin/sh` in the web component), exiting with the
 * remote command's exit code. The command is an argv: each argument is one `cmd` parameter, never
 * joined into a shell string. Needs a key whose limits name the `exec` action (403: exit 5).
 */
export const exec: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['component']);
  const [ref, ...command] = context.args.positional.slice(1);
  if (!ref) throw new UsageError('missing SERVICE: hostctl exec SERVICE [--component C] [-- CMD ARGS…]');
  const component = optionalFlag(context.args, 'component');
  const client = context.client();
  // An id goes straight to the terminal: a key limited to `exec` cannot read the service to
  // resolve it. A name is resolved first, which needs `read` too (docs/jobs.md#hostctl-exec).
  const id = UUID.test(ref) ? ref : (await resolveService(client, ref)).id;
  const url = new URL(`${client.baseUrl.replace(/^http/, 'ws')}/api/services/${id}/exec`);
  if (component !== undefined) url.searchParams.set('component', component);
  for (const arg of command) url.searchParams.append('cmd', arg);
  return relayTerminal(url, client.authorization(), context.terminal ?? processTerminal(), context.err);
};

function processTerminal(): TerminalIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    onResize: (listener) => {
      process.on('SIGWINCH', listener);
      return () => process.off('SIGWINCH', listener);
    },
  };
}
