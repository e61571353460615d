import { child, entries, isRecord, type Problems } from './problems.js';

/**
 * `ports` and `expose` reduce to container ports. Nothing is ever published on the host (the
 * reverse proxy reaches containers on their network), so the host side of a mapping is ignored,
 * and ranges or non-TCP protocols, which the proxy cannot route, are refused.
 */
const LONG_PORT_KEYS = new Set([
  'target',
  'published',
  'host_ip',
  'protocol',
  'mode',
  'name',
  'app_protocol',
]);

export function parsePorts(value: unknown, path: string, problems: Problems): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.add(path, 'must be a list');
    return [];
  }
  const ports: number[] = [];
  value.forEach((item, index) => {
    const port = isRecord(item)
      ? longPort(item, child(path, index), problems)
      : shortPort(item, child(path, index), problems, true);
    if (port !== undefined) ports.push(port);
  });
  return ports;
}

export function parseExpose(value: unknown, path: string, problems: Problems): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.add(path, 'must be a list');
    return [];
  }
  const ports: number[] = [];
  value.forEach((item, index) => {
    const port = shortPort(item, child(path, index), problems, false);
    if (port !== undefined) ports.push(port);
  });
  return ports;
}

function shortPort(
  item: unknown,
  path: string,
  problems: Problems,
  allowHostPart: boolean,
): number | undefined {
  if (typeof item === 'number') return portNumber(item, path, problems);
  if (typeof item !== 'string') {
    problems.add(path, 'must be a port number or string');
    return undefined;
  }
  const [spec, protocol, extra] = item.trim().split('/');
  if (extra !== undefined || (protocol !== undefined && protocol.toLowerCase() !== 'tcp')) {
    problems.add(path, 'only tcp ports are supported');
    return undefined;
  }
  // IPv6 host addresses are bracketed, so the container port is always the last colon field.
  const parts = spec!.split(':');
  if (parts.length > 1 && !allowHostPart) {
    problems.add(path, 'expose takes a container port only');
    return undefined;
  }
  if (parts.some((part) => part.includes('-'))) {
    problems.add(path, 'port ranges are not supported');
    return undefined;
  }
  const container = parts[parts.length - 1]!;
  if (!/^\d+$/.test(container)) {
    problems.add(path, `invalid port ${JSON.stringify(item)}`);
    return undefined;
  }
  return portNumber(Number(container), path, problems);
}

function longPort(item: Record<string, unknown>, path: string, problems: Problems): number | undefined {
  for (const [key] of entries(item)) {
    if (!LONG_PORT_KEYS.has(key)) problems.add(child(path, key), `${key} is not allowed`);
  }
  const protocol = item.protocol;
  if (protocol !== undefined && protocol !== 'tcp')
    problems.add(child(path, 'protocol'), 'only tcp ports are supported');
  const target = item.target;
  if (typeof target === 'string' && target.includes('-')) {
    problems.add(child(path, 'target'), 'port ranges are not supported');
    return undefined;
  }
  if (typeof target === 'string' && /^\d+$/.test(target))
    return portNumber(Number(target), child(path, 'target'), problems);
  if (typeof target === 'number') return portNumber(target, child(path, 'target'), problems);
  problems.add(child(path, 'target'), 'a container port is required');
  return undefined;
}

function portNumber(port: number, path: string, problems: Problems): number | undefined {
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  problems.add(path, 'port must be an integer between 1 and 65535');
  return undefined;
}
