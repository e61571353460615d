import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * TCP connect probe of a container's port on its bridge address (an address of a container this
 * worker created; the host reaches its own bridge networks). A second attempt after a short pause
 * keeps one dropped SYN or a busy accept queue from counting as a failed check.
 */
export async function probePort(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  if (await connects(host, port, timeoutMs)) return true;
  await sleep(300);
  return connects(host, port, timeoutMs);
}

/** One TCP connect attempt, only ever to the address of a container this worker created. */
export function connects(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    const done = (isOpen: boolean) => {
      socket.destroy();
      resolve(isOpen);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
