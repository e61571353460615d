import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@hostctl/testing';
import type { RegistryAuth } from '../adapters/registry-auth.js';

/**
 * A second platform registry that wants credentials: Debian's docker-registry (the dev stack's,
 * scripts/lib/docker.sh) with htpasswd auth on a free loopback port, deletes enabled, storage in
 * a temporary directory. Loopback registries are insecure by default for both engines, so the
 * dev engine pushes to it and the swarm engine's tasks pull from it over plain HTTP.
 */
export interface AuthRegistry {
  address: string;
  auth: RegistryAuth;
  /** Its storage directory: a second, read-only registry may serve the same images. */
  storage: string;
  stop(): Promise<void>;
}

/**
 * `readOnlyOf`: a read-only registry (storage.maintenance.readonly: pushes and deletes are
 * refused) serving the storage of that one, with a user of its own: the nodes' pull endpoint.
 */
export async function startAuthRegistry(
  options: { readOnlyOf?: AuthRegistry; username?: string } = {},
): Promise<AuthRegistry> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hostctl-auth-registry-'));
  const storage = options.readOnlyOf?.storage ?? `${dir}/storage`;
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const auth = {
    username: options.username ?? 'hostctl-nodes',
    password: randomBytes(12).toString('hex'),
    serveraddress: address,
  };
  // The registry reads bcrypt entries only; Python's crypt (libxcrypt) writes them.
  const hash = execFileSync(
    'python3',
    [
      '-c',
      'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))',
      auth.password,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  ).trim();
  await writeFile(path.join(dir, 'htpasswd'), `${auth.username}:${hash}\n`);
  await writeFile(
    path.join(dir, 'config.yml'),
    [
      'version: 0.1',
      'log: { level: warn, accesslog: { disabled: true } }',
      options.readOnlyOf
        ? `storage: { filesystem: { rootdirectory: ${storage} }, maintenance: { readonly: { enabled: true } } }`
        : `storage: { filesystem: { rootdirectory: ${storage} }, delete: { enabled: true } }`,
      `http: { addr: "${address}" }`,
      `auth: { htpasswd: { realm: hostctl-test, path: ${dir}/htpasswd } }`,
      '',
    ].join('\n'),
  );
  const child = spawn('docker-registry', ['serve', path.join(dir, 'config.yml')], { stdio: 'ignore' });
  const stop = async () => {
    child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 20_000; ; await sleep(200)) {
    // Up once it asks for credentials.
    const status = await fetch(`http://${address}/v2/`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 401) return { address, auth, storage, stop };
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the htpasswd registry on ${address} did not start (last status ${status})`);
    }
  }
}
