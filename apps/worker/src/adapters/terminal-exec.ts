import type { Duplex } from 'node:stream';
import { createDockerClient } from './docker-client.js';

/**
 * One exec with a TTY in a running container (docs/jobs.md#terminal). A command run to its end with
 * its output collected (a backup hook) is adapters/container-exec.ts.
 */
export interface ExecProcess {
  /** The TTY's both directions: write stdin, read output (one stream: a TTY merges stdout and stderr). */
  stream: Duplex;
  resize(cols: number, rows: number): Promise<void>;
  /** The command's exit code once it ended; null while it runs or when the engine does not say. */
  exitCode(): Promise<number | null>;
}

export interface TerminalExec {
  open(containerId: string, command: string[], size?: { cols: number; rows: number }): Promise<ExecProcess>;
}

/** `docker exec -it` through dockerode: the argv as given, never through a shell of ours. */
export function createTerminalExec(options: { socketPath: string }): TerminalExec {
  const docker = createDockerClient(options.socketPath);
  return {
    async open(containerId, command, size) {
      const exec = await docker.getContainer(containerId).exec({
        Cmd: command,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: true,
      });
      const stream = await exec.start({ hijack: true, stdin: true, Tty: true });
      const resize = async (cols: number, rows: number) => {
        await exec.resize({ w: cols, h: rows });
      };
      if (size) await resize(size.cols, size.rows).catch(() => undefined);
      return {
        stream,
        resize,
        async exitCode() {
          const state = await exec.inspect();
          return state.Running ? null : (state.ExitCode ?? null);
        },
      };
    },
  };
}
