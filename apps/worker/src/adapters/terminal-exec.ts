import type { Duplex } from 'node:stream';
import { createDockerClient, objectSegment } from './docker-client.js';

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

/**
 * Why a terminal cannot open where it was asked to (no running container, a node whose engine the
 * worker does not hold): its message is the terminal's error detail as it is.
 */
export class TerminalUnavailable extends Error {}

/**
 * `docker exec -it` through dockerode: the argv as given, never through a shell of ours.
 * `openTimeoutMs`: an engine behind a forwarded socket (another swarm node) that has not started
 * the exec by then is given up on, so a dead node ends the terminal with a reason instead of a
 * silence. Only the opening is bounded: an idle shell's stream may stay quiet as long as it likes.
 */
export function createTerminalExec(options: {
  socketPath: string;
  openTimeoutMs?: number;
  /** How the timeout's message names the engine (a node's hostname). */
  engineName?: string;
}): TerminalExec {
  const docker = createDockerClient(options.socketPath);
  const start = async (containerId: string, command: string[], size?: { cols: number; rows: number }) => {
    const exec = await docker.getContainer(objectSegment(containerId, 'container')).exec({
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
  };
  return {
    open(containerId, command, size) {
      const opening = start(containerId, command, size);
      const limit = options.openTimeoutMs;
      if (limit === undefined) return opening;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          // An exec that starts after all has nobody to talk to: hang it up.
          void opening.then((process) => process.stream.destroy()).catch(() => undefined);
          const engine = options.engineName ?? 'the engine';
          reject(new TerminalUnavailable(`${engine} did not open the exec within ${limit / 1000} s`));
        }, limit);
      });
      return Promise.race([opening, late]).finally(() => clearTimeout(timer));
    },
  };
}
