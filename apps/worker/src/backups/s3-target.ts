import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { EngineMount } from '../adapters/backup-containers.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { checkCustomerId, requireBackupKey, type BackupTarget, type RepositoryKeys } from './repository.js';
import { openS3Relay } from './s3-relay.js';

export interface S3Settings {
  BACKUP_KEY: string;
  BACKUP_S3_ENDPOINT: string;
  BACKUP_S3_BUCKET: string;
  BACKUP_S3_PREFIX: string;
  BACKUP_S3_REGION: string;
  BACKUP_S3_ACCESS_KEY_ID: string;
  BACKUP_S3_SECRET_ACCESS_KEY: string;
  BACKUP_S3_CA_FILE: string;
  BACKUP_RELAY_DIR: string;
}

/** Where the relay's socket appears in the container. */
const RELAY_MOUNT = '/run/hostctl-s3.sock';
const CA_MOUNT = '/run/hostctl-s3-ca.pem';
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const REGION = /^[a-z0-9-]{1,40}$/;

interface Endpoint {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
}

const unconfigured = (what: string) =>
  new PermanentStepError(`backups are not configured on this worker: ${what} (BACKUP_TARGET=s3)`);

/** The endpoint URL, checked: a scheme, a host and a port, nothing else (no path, no userinfo). */
export function parseEndpoint(value: string): Endpoint {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw unconfigured('BACKUP_S3_ENDPOINT must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw unconfigured('BACKUP_S3_ENDPOINT must be an http(s) URL');
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search)
    throw unconfigured('BACKUP_S3_ENDPOINT must name only a scheme, a host and a port');
  if (url.hostname.startsWith('[')) throw unconfigured('BACKUP_S3_ENDPOINT: IPv6 literals are not supported');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { protocol: url.protocol, host: url.hostname, port };
}

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * The in-container end of the relay: socat listens on the container's own loopback at the
 * endpoint's port and forwards to the relay socket; restic starts once it listens (read from
 * /proc/net/tcp, no guessed sleep) and talks to `<endpoint host>:<port>`. A container without a
 * network gets no /etc/hosts from Docker, so the script maps the endpoint's name to 127.0.0.1
 * itself: TLS names and S3 signatures stay the endpoint's real ones.
 */
export function relayScript(endpoint: { host: string; port: number }): string {
  const hex = endpoint.port.toString(16).toUpperCase().padStart(4, '0');
  const lines = [];
  if (isIP(endpoint.host) === 0) {
    // Checked so the name can sit in the script: letters, digits, dots and dashes only.
    if (!HOSTNAME.test(endpoint.host))
      throw unconfigured('BACKUP_S3_ENDPOINT has a host name restic cannot use');
    lines.push(`echo '127.0.0.1 ${endpoint.host}' >> /etc/hosts`);
  }
  lines.push(
    `socat TCP-LISTEN:${endpoint.port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${RELAY_MOUNT} &`,
    'i=0',
    `until grep -q ' 0100007F:${hex} 00000000:0000 0A ' /proc/net/tcp; do`,
    '  i=$((i+1)); [ "$i" -gt 200 ] && { echo "the S3 relay did not start" >&2; exit 1; }; sleep 0.05',
    'done',
    'exec "$@"',
  );
  return lines.join('\n');
}

/**
 * The S3 target: each customer's repository is `<bucket>/<prefix>/<customer id>` with the
 * customer's own password (BACKUP_KEY-derived, as for the local target). The credentials reach
 * only the engine container's environment.
 */
export function createS3Target(
  settings: S3Settings,
  keys?: RepositoryKeys,
  /** The address the relay dials instead of resolving the endpoint's name again (a checked one). */
  dial: { host?: string } = {},
): BackupTarget {
  const configured = () => {
    const endpoint = parseEndpoint(settings.BACKUP_S3_ENDPOINT);
    if (!BUCKET.test(settings.BACKUP_S3_BUCKET)) throw unconfigured('BACKUP_S3_BUCKET is not a bucket name');
    const prefix = settings.BACKUP_S3_PREFIX.replace(/^\/+|\/+$/g, '');
    if (prefix !== '' && !PREFIX.test(prefix))
      throw unconfigured('BACKUP_S3_PREFIX has characters a key cannot');
    if (!REGION.test(settings.BACKUP_S3_REGION)) throw unconfigured('BACKUP_S3_REGION is not a region');
    if (settings.BACKUP_S3_ACCESS_KEY_ID === '' || settings.BACKUP_S3_SECRET_ACCESS_KEY === '')
      throw unconfigured('BACKUP_S3_ACCESS_KEY_ID and BACKUP_S3_SECRET_ACCESS_KEY are needed');
    const relayDir = settings.BACKUP_RELAY_DIR || path.join(os.tmpdir(), 'hostctl-backup-relay');
    if (!path.isAbsolute(relayDir)) throw unconfigured('BACKUP_RELAY_DIR must be absolute');
    const caFile = settings.BACKUP_S3_CA_FILE;
    if (caFile !== '' && !path.isAbsolute(caFile)) throw unconfigured('BACKUP_S3_CA_FILE must be absolute');
    return { endpoint, prefix, relayDir, caFile, keys: requireBackupKey(settings.BACKUP_KEY, keys) };
  };
  return {
    kind: 's3',
    async open(customerId) {
      const { endpoint, prefix, relayDir, caFile, keys: repositoryKeys } = configured();
      const password = repositoryKeys.passwordFor(checkCustomerId(customerId));
      const key = [prefix, customerId].filter(Boolean).join('/');
      const repository = `s3:${endpoint.protocol}//${endpoint.host}:${endpoint.port}/${settings.BACKUP_S3_BUCKET}/${key}`;
      const relay = await openS3Relay(relayDir, { host: dial.host ?? endpoint.host, port: endpoint.port });
      const options = ['-o', 's3.bucket-lookup=path', '-o', `s3.region=${settings.BACKUP_S3_REGION}`];
      const mounts: EngineMount[] = [
        { type: 'bind', source: relay.socketPath, target: RELAY_MOUNT, readOnly: false },
      ];
      if (caFile !== '') {
        options.push('--cacert', CA_MOUNT);
        mounts.push({ type: 'bind', source: caFile, target: CA_MOUNT, readOnly: true });
      }
      return {
        env: [
          `RESTIC_REPOSITORY=${repository}`,
          `RESTIC_PASSWORD=${password}`,
          `AWS_ACCESS_KEY_ID=${settings.BACKUP_S3_ACCESS_KEY_ID}`,
          `AWS_SECRET_ACCESS_KEY=${settings.BACKUP_S3_SECRET_ACCESS_KEY}`,
        ],
        mounts,
        command: (cmd) => {
          const [program, ...args] = cmd;
          const wrapped = program === 'restic' ? ['restic', ...options, ...args] : cmd;
          return ['sh', '-c', relayScript(endpoint), 'sh', ...wrapped];
        },
        capAdd: endpoint.port < 1024 ? ['NET_BIND_SERVICE'] : [],
        secrets: [password, settings.BACKUP_S3_SECRET_ACCESS_KEY],
        close: () => relay.close(),
      };
    },
  };
}
