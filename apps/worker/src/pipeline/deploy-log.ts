import type { WorkerDeploymentStore } from '@hostctl/db';

/**
 * Append-only deployment log: one row per line with an increasing sequence number, written as it
 * happens and never rewritten (followers read rows after the last seq they saw). A retried job
 * continues after the lines of earlier attempts. Every line passes the redactor first. Streams
 * are stdout (progress) and stderr (failures), like container output, so clients render both alike.
 */
export interface DeployLog {
  info(message: string): Promise<void>;
  error(message: string): Promise<void>;
}

export async function createDeployLog(
  store: Pick<WorkerDeploymentStore, 'nextLogSeq' | 'appendLog'>,
  deploymentId: string,
  redact: (text: string) => string,
  onAppend: () => void = () => {},
): Promise<DeployLog> {
  let seq = await store.nextLogSeq(deploymentId);
  const write = async (stream: 'stdout' | 'stderr', message: string) => {
    const current = seq;
    seq += 1;
    await store.appendLog(deploymentId, current, stream, redact(message).slice(0, 4000));
    onAppend();
  };
  return { info: (message) => write('stdout', message), error: (message) => write('stderr', message) };
}
