import { PassThrough } from 'node:stream';
import { createDockerClient, objectSegment } from './docker-client.js';
import { toRuntimeError } from './docker-errors.js';

/** What a command run in a running container did (backups/backup-hooks.ts). */
export interface ExecResult {
  /** null when the command did not finish within its time. */
  exitCode: number | null;
  /** stdout and stderr interleaved, at most the last `maxOutputChars` characters. */
  output: string;
  timedOut: boolean;
}

export interface ContainerExec {
  /** Runs `argv` (no shell) in the running container with its environment and user. */
  exec(
    containerId: string,
    argv: string[],
    options: { timeoutMs: number; maxOutputChars?: number },
  ): Promise<ExecResult>;
}

const DEFAULT_MAX_OUTPUT_CHARS = 16 * 1024;

/**
 * `docker exec` on one engine. The engine has no call to end an exec, so a command past its time
 * is abandoned (the attach is closed; the process may still run in the container until it ends):
 * the caller reports the timeout. Output is bounded to its tail, so a chatty dump cannot fill the
 * worker's memory or the run's log.
 */
export function createContainerExec(options: { socketPath: string }): ContainerExec {
  const docker = createDockerClient(options.socketPath);
  return {
    async exec(containerId, argv, { timeoutMs, maxOutputChars = DEFAULT_MAX_OUTPUT_CHARS }) {
      const container = docker.getContainer(objectSegment(containerId, 'container'));
      try {
        const execution = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
        const stream = await execution.start({ hijack: true, stdin: false });
        const sink = new PassThrough();
        let output = '';
        sink.on('data', (chunk: Buffer) => {
          output = (output + chunk.toString('utf8')).slice(-maxOutputChars);
        });
        docker.modem.demuxStream(stream, sink, sink);
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([
          new Promise<boolean>((resolve) => {
            stream.on('end', () => resolve(true));
            stream.on('close', () => resolve(true));
            stream.on('error', () => resolve(true));
          }),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), timeoutMs);
          }),
        ]);
        clearTimeout(timer);
        if (!ended) {
          stream.destroy();
          return { exitCode: null, output, timedOut: true };
        }
        // The attach can end a moment before the engine records the exit.
        let info = await execution.inspect();
        for (let attempt = 0; info.Running && attempt < 40; attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          info = await execution.inspect();
        }
        return { exitCode: info.Running ? null : info.ExitCode, output, timedOut: false };
      } catch (error) {
        throw toRuntimeError(error, `cannot run a command in container ${containerId}`);
      }
    },
  };
}
