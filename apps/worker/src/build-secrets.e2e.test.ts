import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { startGitServer, type GitServer } from '@hostctl/testing';
import { describe, expect, it } from 'vitest';
import { waitForDeployment } from './testing/fixtures.js';
import { createRepositoryService } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

/**
 * Build-time use never bakes a variable into an image (docs/secrets.md#secret-variables): a git
 * service whose Dockerfile declares its variables' names as ARGs and writes them into a file is
 * built with planted plain and secret values set. The values reach the running container's
 * environment, and appear in none of the image's history, its configuration or its layers.
 */
let server: GitServer;
const { db, app, runtime, created } = useWorkerApp('build-secrets', {
  env: { GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => (server = await startGitServer()),
  afterClose: () => server.close(),
});
const docker = new Docker({ socketPath: '/var/run/docker.sock' });

// What a Dockerfile that expects build arguments looks like: were the worker ever to pass the
// service's variables as build args, the RUN line and the file it writes would hold them.
const DOCKERFILE = `FROM ${TEST_IMAGE}
ARG DB_PASSWORD
ARG GREETING
RUN echo "baked:\${DB_PASSWORD}:\${GREETING}:end" > /www-baked.txt
COPY index.html /www/index.html
EXPOSE 8080
`;

/** Every byte `docker save` gives for the image: its config and each layer's uncompressed tar. */
async function savedImage(reference: string): Promise<Buffer> {
  const stream = await docker.getImage(reference).get();
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('an image built from a repository', () => {
  it('holds no variable value, plain or secret, in its history, configuration or layers', async () => {
    const secret = `planted-secret-${randomUUID()}`;
    const plain = `planted-plain-${randomUUID()}`;
    const repo = await server.repo('build-args');
    await repo.push({ Dockerfile: DOCKERFILE, 'index.html': 'built' });
    const service = await createRepositoryService(db, {
      method: 'git',
      url: repo.url,
      variables: { DB_PASSWORD: secret, GREETING: plain },
    });
    created.push(service);
    await db.service.update({
      where: { id: service.serviceId },
      data: { secretNames: { DB_PASSWORD: new Date().toISOString() } },
    });
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId);
    expect(deployment.status).toBe('succeeded');
    const image = (deployment.plan as { containers: { image: string }[] }).containers[0]?.image ?? '';
    expect(image).toMatch(/^hostctl\//);

    // The values were in play: the running container has both in its environment.
    const [web] = await runtime.listContainers({
      [SERVICE_LABEL]: service.serviceId,
      [COMPONENT_LABEL]: 'web',
    });
    const env = (await docker.getContainer(web!.id).inspect()).Config.Env;
    expect(env).toEqual(expect.arrayContaining([`DB_PASSWORD=${secret}`, `GREETING=${plain}`]));

    const history = JSON.stringify(await docker.getImage(image).history());
    const config = JSON.stringify(await docker.getImage(image).inspect());
    const saved = await savedImage(image);
    // Each is looked at for real: the RUN step is in the history, its file in a layer, empty.
    expect(history).toContain('/www-baked.txt');
    expect(saved.includes('baked:::end')).toBe(true);
    for (const value of [secret, plain]) {
      expect(history).not.toContain(value);
      expect(config).not.toContain(value);
      expect(saved.includes(value)).toBe(false);
    }
  });
});
