import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The suite's own redis-server on a loopback port, without persistence: a restart is a real outage
 * *and* an empty Redis afterwards (every queued job lost), the worst case the system must survive.
 * Never the shared Redis: other suites use it.
 */
export interface RedisServer {
  url: string;
  port: number;
  /** SIGKILL, then (after `downMs`) a fresh server on the same port. */
  restart(downMs: number, whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisServer(port: number): Promise<RedisServer> {
  let child = await launch(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart(downMs, whileDown) {
      await kill(child);
      const started = Date.now();
      await whileDown?.();
      await sleep(Math.max(0, downMs - (Date.now() - started)));
      child = await launch(port);
    },
    stop: () => kill(child),
  };
}

async function launch(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', [...args, '--daemonize', 'no'], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (!(await pingRedis(port))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not start`);
    await sleep(50);
  }
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
