import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

interface S3Relay {
  socketPath: string;
  close(): Promise<void>;
}

/**
 * The only way out of an S3 backup container (docs/backups.md#the-s3-target): a Unix socket of the
 * worker, bind-mounted into a container that still has no network at all, whose every connection
 * the worker pipes to the endpoint's host and port and nowhere else. restic's TLS goes through
 * untouched (the worker sees ciphertext for an https endpoint). So the container can reach neither
 * the control plane's services nor another tenant, whatever the egress firewall's state.
 */
export async function openS3Relay(dir: string, endpoint: { host: string; port: number }): Promise<S3Relay> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // In a shared /tmp someone else may have made the directory first: they could then swap our
  // socket for theirs and receive restic's traffic. Only a private directory of ours will do.
  const stat = await lstat(dir);
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0)
    throw new Error(
      `the relay directory ${dir} must be a directory of this user with mode 0700 (BACKUP_RELAY_DIR)`,
    );
  const socketPath = path.join(dir, `${randomUUID()}.sock`);
  const open = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect({ host: endpoint.host, port: endpoint.port });
    open.add(inbound).add(outbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
      open.delete(inbound);
      open.delete(outbound);
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    socketPath,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketPath, { force: true });
    },
  };
}
