import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { SERVICE_LABEL } from '@hostctl/domain';
import { createRedis } from '@hostctl/queue';
import { redisDump as redisDumpOf } from '@hostctl/testing';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedeployment, waitFor, waitForDeployment } from './testing/fixtures.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

/**
 * Issue 30's acceptance: distinct values planted in a service's variables, in a release that was
 * rotated away (the rollback history) and in a value that reached a deploy error, then a pg_dump of
 * the database, a dump of the installation's Redis keys (job payloads, log streams) and the
 * worker's own log: none of the values appears anywhere.
 */
const run = promisify(execFile);
const workerLog: string[] = [];
const fixture = useWorkerApp('secrets', {
  app: {
    logger: pino({ level: 'debug' }, { write: (line: string) => void workerLog.push(line) }),
    readiness: { timeoutMs: 20_000, stableMs: 300 },
  },
});
const { prefix, db, app, runtime } = fixture;
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const redis = createRedis(TEST_REDIS_URL, 'request');
afterAll(async () => redis.quit());

const COMPOSE = `services:
  web:
    image: local/busybox:1
    command: ["httpd", "-f", "-p", "8080", "-h", "/"]
    ports: ["8080"]
    environment:
      DB_PASSWORD: \${DB_PASSWORD}
`;

const redisDump = () => redisDumpOf(redis, prefix);

async function pgDump(): Promise<string> {
  const { stdout } = await run('pg_dump', ['--data-only', TEST_DATABASE_URL], {
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

describe('planted secrets', () => {
  it('appear in no database dump, Redis key, deploy log or worker log line', async () => {
    const rotatedAway = `planted-old-${randomUUID()}`;
    const current = `planted-new-${randomUUID()}`;
    const service = await fixture.deploy({ compose: COMPOSE, variables: { DB_PASSWORD: rotatedAway } });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');

    // The owner rotates the password: the first release (the rollback history) keeps the old one.
    await db.service.update({
      where: { id: service.serviceId },
      data: { variables: { DB_PASSWORD: current } },
    });
    const rotation = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: rotation });
    expect((await waitForDeployment(db, rotation)).status).toBe('succeeded');

    // What the worker and API read is the plain value (the sealing is invisible to them)...
    const first = await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } });
    expect(first.sourceVariables).toEqual({ DB_PASSWORD: rotatedAway });
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).variables).toEqual({
      DB_PASSWORD: current,
    });
    // ...and the dump is looked at for real: ids of this test's rows are in it.
    const dump = await pgDump();
    expect(dump).toContain(rotation);
    const redisText = await redisDump();
    expect(redisText).toContain(rotation);
    const logs = await db.deploymentLog.findMany({ where: { deployment: { serviceId: service.serviceId } } });
    expect(logs.length).toBeGreaterThan(0);

    for (const value of [rotatedAway, current]) {
      expect(dump).not.toContain(value);
      expect(redisText).not.toContain(value);
      expect(logs.map((line) => line.message).join('\n')).not.toContain(value);
      expect(workerLog.join('')).not.toContain(value);
    }
  });
});

describe('secret variables (docs/secrets.md#secret-variables)', () => {
  it("reach the container's environment, and no log, log stream, event, dump or worker log", async () => {
    const secret = `planted-secret-${randomUUID()}`;
    const crashing = `planted-crash-${randomUUID()}`;
    const marked = { DB_PASSWORD: new Date().toISOString() };
    const service = await fixture.deploy({
      compose: COMPOSE,
      variables: { DB_PASSWORD: secret, PLAIN: 'visible' },
      secretNames: marked,
    });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    const [container] = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
    const env = (await docker.getContainer(container!.id).inspect()).Config.Env;
    expect(env).toContain(`DB_PASSWORD=${secret}`);
    // The release records the marks with the values, so a rollback restores both together.
    const release = await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } });
    expect(release.sourceSecretNames).toEqual(marked);
    // And which version of the variables it ran (the service's, not written since).
    const { variablesVersion } = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(release.sourceVariablesVersion).toBe(variablesVersion);

    // A container that prints the secret and exits: its output reaches the deploy error, the
    // event and the log, redacted.
    const failing = await fixture.deploy({
      compose:
        'services:\n  app:\n    image: local/busybox:1\n    command: ["sh", "-c", "echo pw=$$PW; exit 3"]\n    environment: {PW: "${PW}"}\n',
      variables: { PW: crashing },
      secretNames: { PW: new Date().toISOString() },
    });
    const failed = await waitForDeployment(db, failing.deploymentId);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('pw=***');

    // The application's own output (the service log stream in Redis) is masked too: wait until
    // the shipper wrote the line, so the check below looks at it.
    const redisText = await waitFor('the crashing container output in the log stream', async () => {
      const text = await redisDump();
      return text.includes('"message","pw=') ? text : undefined;
    });
    expect(redisText).toContain('"message","pw=***"');
    const dump = await pgDump();
    expect(dump).toContain(failing.deploymentId);
    const rows = await db.deploymentLog.findMany({
      where: { deployment: { serviceId: { in: [service.serviceId, failing.serviceId] } } },
    });
    const events = await db.serviceEvent.findMany({
      where: { serviceId: { in: [service.serviceId, failing.serviceId] } },
    });
    const shown = [...rows.map((row) => row.message), ...events.map((event) => event.message)].join('\n');
    expect(shown).toContain('pw=***');
    for (const value of [secret, crashing]) {
      expect(dump).not.toContain(value);
      expect(redisText).not.toContain(value);
      expect(shown).not.toContain(value);
      expect(workerLog.join('')).not.toContain(value);
    }
  });
});

describe('variable groups (docs/secrets.md#variable-groups)', () => {
  const GROUPED = `services:
  web:
    image: local/busybox:1
    command: ["sh", "-c", "echo token=$$TOKEN; exec httpd -f -p 8080 -h /"]
    ports: ["8080"]
    environment:
      TOKEN: \${TOKEN}
      SHARED: \${SHARED}
      OVERRIDE: \${OVERRIDE}
`;

  it("give the container their values in order, under the service's own, and a group secret shows nowhere", async () => {
    const secret = `planted-group-secret-${randomUUID()}`;
    const service = await fixture.deploy({
      compose: GROUPED,
      variables: { OVERRIDE: 'from-service' },
      variableGroups: [
        { variables: { SHARED: 'from-first', OVERRIDE: 'from-first', TOKEN: 'from-first' } },
        {
          variables: { SHARED: 'from-second', OVERRIDE: 'from-second', TOKEN: secret },
          secretNames: { TOKEN: new Date().toISOString() },
        },
      ],
    });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    const [container] = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
    const env = (await docker.getContainer(container!.id).inspect()).Config.Env;
    // A later group over an earlier one; the service's own value over any group's.
    expect(env).toEqual(
      expect.arrayContaining([`TOKEN=${secret}`, 'SHARED=from-second', 'OVERRIDE=from-service']),
    );
    // The release records which group versions it ran, not their values.
    const release = await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } });
    const groups = await db.serviceVariableGroup.findMany({
      where: { serviceId: service.serviceId },
      orderBy: { position: 'asc' },
    });
    expect(release.sourceVariableGroups).toEqual(groups.map((g) => ({ group_id: g.groupId, version: 1 })));
    expect(release.sourceVariables).toEqual({ OVERRIDE: 'from-service' });

    // The application prints the group's secret: the log stream holds it masked.
    const redisText = await waitFor('the container output in the log stream', async () => {
      const text = await redisDump();
      return text.includes('"message","token=') ? text : undefined;
    });
    expect(redisText).toContain('"message","token=***"');
    const dump = await pgDump();
    expect(dump).toContain(service.deploymentId);
    const rows = await db.deploymentLog.findMany({ where: { deployment: { serviceId: service.serviceId } } });
    expect(rows.length).toBeGreaterThan(0);
    expect(dump).not.toContain(secret);
    expect(redisText).not.toContain(secret);
    expect(rows.map((row) => row.message).join('\n')).not.toContain(secret);
    expect(workerLog.join('')).not.toContain(secret);
  });
});
