import { ConfigError } from '@hostctl/config';
import { createDockerTelemetry } from './docker-telemetry.js';
import type { ContainerTelemetry } from './telemetry.js';

/**
 * The engines of swarm nodes other than the manager's (SWARM_NODE_ENGINES). A manager knows every
 * task but not its container's usage, disk or health check output: only the engine running the
 * container has them, so the observers ask that engine, by the node's hostname.
 * docs/multi-host.md#usage-of-tasks-on-other-nodes.
 */
export type NodeEngines = ReadonlyMap<string, ContainerTelemetry>;

/**
 * A request to another node's engine that stays silent this long fails: the node may be dead
 * behind a forwarded socket, and one hung read must not stall every later usage sample.
 */
export const NODE_ENGINE_TIMEOUT_MS = 10_000;

/**
 * `<hostname>=unix:///<socket>` pairs, comma-separated, as the config schema admits them, to the
 * socket of each node. A node named twice is a configuration error, not a silent last-one-wins.
 */
export function parseNodeEngines(value: string): Map<string, string> {
  const sockets = new Map<string, string>();
  const problems: string[] = [];
  for (const entry of value.split(',').filter((part) => part.trim() !== '')) {
    const separator = entry.indexOf('=');
    const hostname = entry.slice(0, separator).trim();
    const socket = entry.slice(separator + 1).trim();
    if (separator <= 0 || !/^unix:\/\/\/./.test(socket))
      problems.push(`SWARM_NODE_ENGINES: "${entry}" is not <node hostname>=unix:///<socket>`);
    else if (sockets.has(hostname)) problems.push(`SWARM_NODE_ENGINES: node ${hostname} is named twice`);
    else sockets.set(hostname, socket.slice('unix://'.length));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return sockets;
}

export function createNodeEngines(sockets: ReadonlyMap<string, string>): NodeEngines {
  return new Map(
    [...sockets].map(([hostname, socketPath]) => [
      hostname,
      createDockerTelemetry({ socketPath, timeoutMs: NODE_ENGINE_TIMEOUT_MS }),
    ]),
  );
}
