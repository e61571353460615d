import { SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { createComposeService, httpGet, waitForDeployment } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Failed deployments must end failed (not retried forever) with an error a person can act on.
const { db, runtime, app, created } = useWorkerApp('failures', {
  app: { readiness: { timeoutMs: 3000, stableMs: 500 } },
});
// The stack scripts always start the local registry: a missing one is a failed set-up, not a skip.
await httpGet('127.0.0.1', 5000, '/v2/').catch(() => {
  throw new Error('the local registry on 127.0.0.1:5000 is not running: run scripts/setup-services.sh');
});

async function deploy(
  compose: string,
  options: { variables?: Record<string, string>; deployMethod?: 'template' } = {},
) {
  const service = await createComposeService(db, { compose, ...options });
  created.push(service);
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  const deployment = await waitForDeployment(db, service.deploymentId);
  const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
  const events = await db.serviceEvent.findMany({
    where: { serviceId: service.serviceId },
    orderBy: { id: 'asc' },
  });
  const logs = await db.deploymentLog.findMany({
    where: { deploymentId: service.deploymentId },
    orderBy: { seq: 'asc' },
  });
  return { service, deployment, row, events, logs };
}

describe('failing deployments', () => {
  it('fails at once when the image is not on the host and names no registry', async () => {
    const result = await deploy('services:\n  web:\n    image: local/does-not-exist:1\n');
    expect(result.deployment).toMatchObject({ status: 'failed', step: 'pull' });
    expect(result.deployment.error).toMatch(
      /^pull step failed: image local\/does-not-exist:1 is not available on this host/,
    );
    expect(result.row.status).toBe('failed');
    expect(result.events.map((event) => `${event.type} ${event.status}`)).toEqual([
      'deploy started',
      'deploy failed',
    ]);
    expect(result.events[1]?.message).toBe(result.deployment.error);
    expect(result.logs.at(-1)).toMatchObject({ stream: 'stderr', message: result.deployment.error });
    // Permanent: one attempt only.
    expect(result.logs.filter((log) => log.message.startsWith('Deploying')).length).toBe(1);
  });

  it('reports the exit code and output of a container that exits at once, without secrets', async () => {
    const compose =
      'services:\n  app:\n    image: local/busybox:1\n    command: ["sh", "-c", "echo token=$$TOKEN; exit 3"]\n    environment: {TOKEN: "${TOKEN}"}\n';
    const result = await deploy(compose, { variables: { TOKEN: 'hunter2-secret' } });
    expect(result.deployment).toMatchObject({ status: 'failed', step: 'verify' });
    expect(result.deployment.error).toMatch(/container app (exited|keeps restarting) \(exit code 3\)/);
    expect(result.deployment.error).toContain('token=***');
    expect(result.row.status).toBe('failed');
    const everything = [
      result.deployment.error,
      ...result.events.map((event) => event.message),
      ...result.logs.map((log) => log.message),
    ].join('\n');
    expect(everything).not.toContain('hunter2-secret');
  });

  it('fails a web container that never listens on its port', async () => {
    const compose =
      'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "3600"]\n    ports: ["8080"]\n';
    const result = await deploy(compose);
    expect(result.deployment.status).toBe('failed');
    expect(result.deployment.error).toBe(
      'verify step failed: container web did not accept connections on port 8080 within 3s',
    );
  });

  it('fails at validation with every problem and its path', async () => {
    const result = await deploy(
      'services:\n  web:\n    image: local/busybox:1\n    privileged: true\n    volumes: ["/var/run/docker.sock:/s"]\n',
    );
    expect(result.deployment).toMatchObject({ status: 'failed', step: 'validate' });
    expect(result.deployment.error).toBe(
      'validate step failed: services.web.privileged: privileged is not allowed: containers never run privileged; services.web.volumes[0]: host paths cannot be mounted ("/var/run/docker.sock"): use a named volume',
    );
    expect(await runtime.listContainers({ [SERVICE_LABEL]: result.service.serviceId })).toEqual([]);
  });

  it('fails clearly for a method that has nothing to run yet', async () => {
    const result = await deploy('', { deployMethod: 'template' });
    expect(result.deployment.error).toBe(
      'validate step failed: deploy method template is not supported yet: the service has no compose definition to run',
    );
  });

  it('fails at once when the registry has no such image', async () => {
    const result = await deploy('services:\n  web:\n    image: 127.0.0.1:5000/hostctl-missing-image:1\n');
    expect(result.deployment).toMatchObject({ status: 'failed', step: 'pull' });
    expect(result.deployment.error).toMatch(/pull step failed: .*hostctl-missing-image/);
  });

  it('pulls an image that names a registry and records its digest', async () => {
    const result = await deploy(
      'services:\n  web:\n    image: 127.0.0.1:5000/busybox:1\n    ports: ["8080"]\n',
    );
    expect(result.deployment.status).toBe('succeeded');
    expect(result.deployment.imageDigest).toMatch(/^127\.0\.0\.1:5000\/busybox@sha256:/);
    expect(result.logs.map((log) => log.message)).toContain('Pulling 127.0.0.1:5000/busybox:1');
  });
});
