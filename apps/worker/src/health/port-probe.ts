import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * TCP connect probe of a container's port on its bridge address (an address of a container this
 * worker created; the host reaches its own bridge networks). A second attempt after a short pause
 * keeps one dropped SYN or a busy accept queue from counting as a failed check.
 */
export function probePort(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return withSecondAttempt(() => connects(host, port, timeoutMs));
}

async function withSecondAttempt(attempt: () => Promise<boolean>): Promise<boolean> {
  if (await attempt()) return true;
  await sleep(300);
  return attempt();
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

/**
 * Probe of a port a Swarm task publishes on its node. Docker's userland proxy listens there and
 * accepts every connection, even when nothing listens in the container, then closes it at once
 * (measured: closed ~2 ms after connecting). So a connection that is closed within `holdMs`
 * without a byte of data is refused; one that stays open (a server waiting for its request) or
 * sends a greeting is listening. Retried once, as probePort is.
 */
export function probePublishedPort(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return withSecondAttempt(() => holds(host, port, timeoutMs));
}

function holds(host: string, port: number, timeoutMs: number, holdMs = 300): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    let timer: NodeJS.Timeout | undefined;
    const done = (isListening: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(isListening);
    };
    socket.once('connect', () => {
      socket.setTimeout(0);
      timer = setTimeout(() => done(true), holdMs);
    });
    socket.once('data', () => done(true));
    socket.once('end', () => done(false));
    socket.once('close', () => done(false));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
