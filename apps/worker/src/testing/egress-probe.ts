import type Docker from 'dockerode';
import { execIn } from './container-exec.js';

/**
 * An HTTP request with busybox `nc` inside a container (its network namespace); busybox's static
 * `wget` crashes in the test image. nc's exit code says nothing: the body is the answer.
 */
export function requestCommand(target: string): string {
  const [host, port] = target.split(' ');
  return `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 4 ${host} ${port}`;
}

/** Runs the request in `container` on `docker`; reached when the answer holds `body`. */
export async function probeFrom(
  docker: Docker,
  container: string,
  target: string,
  body: string,
): Promise<{ reached: boolean; output: string }> {
  const { output } = await execIn(docker, container, ['sh', '-c', requestCommand(target)]);
  return { reached: output.includes(body), output };
}
