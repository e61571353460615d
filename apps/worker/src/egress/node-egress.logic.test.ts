import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createNodesEgress } from './node-egress.js';

/** A logger that keeps what was warned, as the operator would read it. */
function recordingLogger() {
  const warnings: { node?: string; msg?: string }[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void warnings.push(JSON.parse(line) as { node?: string; msg?: string }) },
  );
  return { logger, warnings };
}

describe('the egress policy on other swarm nodes', () => {
  it('logs a node whose engine does not answer, keeps going, and tries it again at the next sweep', async () => {
    const { logger, warnings } = recordingLogger();
    const marked: string[] = [];
    const egress = createNodesEgress({
      sockets: new Map([['node-gone', '/nonexistent/hostctl-node-gone.sock']]),
      image: 'busybox:1.36',
      denyCidrs: '',
      logger,
      markNode: async (socketPath) => void marked.push(socketPath),
    });
    await expect(egress.ensure()).resolves.toBeUndefined();
    await expect(egress.ensure()).resolves.toBeUndefined();
    expect(warnings.map((warning) => [warning.node, warning.msg])).toEqual([
      ['node-gone', 'cannot install the egress policy on a swarm node; tried again at the next sweep'],
      ['node-gone', 'cannot install the egress policy on a swarm node; tried again at the next sweep'],
    ]);
    // Never labelled for Swarm's placement while its rules are not in.
    expect(marked).toEqual([]);
  });
});
