import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';

/** Runs `cmd` in a running container (a Swarm task's too, on its node's engine): exit code and output. */
export async function execIn(
  docker: Docker,
  containerId: string,
  cmd: string[],
): Promise<{ code: number; output: string }> {
  const execution = await docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await execution.start({ hijack: true, stdin: false });
  const sink = new PassThrough();
  let output = '';
  sink.on('data', (chunk: Buffer) => (output += chunk.toString()));
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise((resolve) => stream.on('end', resolve));
  const { ExitCode } = await execution.inspect();
  return { code: ExitCode ?? -1, output };
}
