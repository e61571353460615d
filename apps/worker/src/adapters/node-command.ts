import { createDockerClient } from './docker-client.js';
import { toRuntimeError } from './docker-errors.js';
import { createDockerRuntime, demuxStreams } from './docker-runtime.js';

/** Marks the one-shot containers of node commands, so an operator can tell what left one behind. */
const NODE_COMMAND_LABEL = 'io.hostctl.node-command';
const SYSTEM_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** A command container older than this that is not running was left by a worker that died. */
const LEFTOVER_AGE_S = 300;
/** Pulling the command image may take a while; a command itself answers in well under a second. */
const PULL_TIMEOUT_MS = 120_000;

/** What a program run on a node ended with, as a child process's exit code and output. */
export interface NodeCommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `argv` (a program of the node's own system) on the node, `input` on its stdin. */
export type NodeCommand = (argv: string[], input?: string) => Promise<NodeCommandResult>;

/**
 * Runs a program of a swarm node's own system on that node, through the node's engine
 * (SWARM_NODE_ENGINES), for what the worker does on its own machine with a child process: the
 * egress firewall (docs/security/egress.md#other-nodes). Each run is a one-shot container of
 * `image`, of which only busybox's `chroot` is used: in the node's network namespace, with
 * CAP_NET_ADMIN and the node's root filesystem mounted read-only, it chroots there and execs the
 * program, so the node's own binary acts on the node's own network namespace. (Not `--privileged`
 * with `nsenter -t 1`: an engine whose own capabilities are bounded cannot start a privileged
 * container, and PID 1's namespaces may be closed to it.) The argv is never a shell string;
 * `input` reaches the program's stdin from an environment variable through a fixed script.
 */
export function createNodeCommand(options: {
  socketPath: string;
  image: string;
  timeoutMs: number;
  /** How old a stopped command container must be to count as left over (default 5 minutes). */
  leftoverAgeS?: number;
}): NodeCommand {
  const docker = createDockerClient(options.socketPath, options);
  const runtime = createDockerRuntime(options);
  // Once per worker process: a command container is removed after each run, so one left over
  // was a worker's that died mid-run, long enough ago that no live worker is still reading it.
  const removeLeftovers = async () => {
    const stale = await docker.listContainers({
      all: true,
      filters: { label: [`${NODE_COMMAND_LABEL}=true`], status: ['exited', 'created', 'dead'] },
    });
    for (const container of stale)
      if (Date.now() / 1000 - container.Created >= (options.leftoverAgeS ?? LEFTOVER_AGE_S))
        await docker
          .getContainer(container.Id)
          .remove({ force: true })
          .catch(() => undefined);
  };
  let prepared: Promise<void> | undefined;
  const prepare = (): Promise<void> =>
    (prepared ??= (async () => {
      await removeLeftovers();
      if (await runtime.inspectImage(options.image)) return;
      await runtime.pullImage(options.image, () => undefined, AbortSignal.timeout(PULL_TIMEOUT_MS));
    })().catch((error: unknown) => {
      prepared = undefined;
      throw error;
    }));

  return async (argv, input) => {
    await prepare();
    const program =
      input === undefined ? argv : ['sh', '-c', 'printf "%s" "$HOSTCTL_INPUT" | "$@"', 'sh', ...argv];
    const container = await docker
      .createContainer({
        Image: options.image,
        Cmd: ['chroot', '/host', ...program],
        // The node's PATH, not the image's: the program is found in the node's filesystem.
        Env: [SYSTEM_PATH, ...(input === undefined ? [] : [`HOSTCTL_INPUT=${input}`])],
        Labels: { [NODE_COMMAND_LABEL]: 'true' },
        HostConfig: { NetworkMode: 'host', CapAdd: ['NET_ADMIN'], Binds: ['/:/host:ro'] },
      })
      .catch((error: unknown) => {
        throw toRuntimeError(error, `cannot run ${argv[0]} on the node`);
      });
    try {
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      const logs = await container.logs({ stdout: true, stderr: true, follow: false });
      return { code: StatusCode, ...demuxStreams(logs) };
    } catch (error) {
      throw toRuntimeError(error, `running ${argv[0]} on the node failed`);
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  };
}
