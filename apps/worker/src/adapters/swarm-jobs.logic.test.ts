import type Docker from 'dockerode';
import type { PlanContainer } from '@hostctl/compose';
import { DEPLOYMENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, RUN_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { RUN_DEADLINE_LABEL, swarmJobSpec } from './swarm-jobs.js';
import { swarmNames } from './swarm-spec.js';

const serviceId = '0f0e0d0c-0b0a-4090-8070-605040302010';
const runId = 'a1b2c3d4-e5f6-4000-8000-000000000001';
const names = swarmNames(serviceId, 'hostctl');
const web: PlanContainer = {
  name: 'web',
  image: 'local/app:2',
  entrypoint: ['/entry'],
  command: ['serve'],
  environment: { A: '1' },
  labels: { [RUN_LABEL]: 'tenant-forged', 'com.example': 'x' },
  volumes: [{ volume: 'data', target: '/data', readOnly: false }],
  ports: [8080],
  dependsOn: [],
  restart: 'always',
  init: false,
  limits: { memoryBytes: 128 * 1024 * 1024, nanoCpus: 500_000_000, pids: 64 },
  healthcheck: { test: ['CMD', 'true'], intervalMs: 1000, timeoutMs: 1000, retries: 1, startPeriodMs: 0 },
  placement: { constraints: ['node.labels.zone==a'], preferences: [] },
};
const job = {
  serviceId,
  releaseId: 'dep-2',
  plan: { containers: [web], volumes: ['data'], web: { container: 'web', port: 8080 } },
  command: ['sh', '-c', 'exit 3'],
  runId,
};

describe('swarmJobSpec', () => {
  const spec = swarmJobSpec(web, job, {
    names,
    image: '127.0.0.1:5000/hostctl/app@sha256:abc',
    deadline: 1_000,
    volumeNode: 'node-1',
    platformConstraints: ['node.labels.egress==on'],
  });
  const task = spec.TaskTemplate as Docker.ContainerTaskSpec;

  it('is the component’s spec with the command, the given image and one task never restarted', () => {
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    expect(task.RestartPolicy).toEqual({ Condition: 'none' });
    expect(task.ContainerSpec).toMatchObject({
      Image: '127.0.0.1:5000/hostctl/app@sha256:abc',
      Command: ['/entry'],
      Args: ['sh', '-c', 'exit 3'],
      Env: ['A=1'],
      Init: true,
    });
    expect(task.ContainerSpec?.HealthCheck).toBeUndefined();
    expect(task.Resources?.Limits).toEqual({
      MemoryBytes: 128 * 1024 * 1024,
      NanoCPUs: 500_000_000,
      Pids: 64,
    });
    expect(task.ContainerSpec?.Mounts?.map((mount) => mount.Source)).toEqual([names.volume('data')]);
  });

  it('keeps every placement constraint: the platform’s, the compose file’s and the volume node', () => {
    expect(task.Placement?.Constraints).toEqual([
      'node.labels.egress==on',
      'node.labels.zone==a',
      'node.id==node-1',
    ]);
  });

  it('joins the overlay without the component’s alias and publishes nothing', () => {
    expect(task.Networks).toEqual([{ Target: names.network }]);
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  });

  it('is labelled as the run’s job, never as a component of the service', () => {
    const expected = {
      [OWNER_LABEL]: 'true',
      [INSTANCE_LABEL]: 'hostctl',
      [DEPLOYMENT_LABEL]: 'dep-2',
      [RUN_LABEL]: runId,
      [RUN_DEADLINE_LABEL]: '1000',
    };
    expect(spec.Labels).toEqual(expected);
    expect(spec.Labels).not.toHaveProperty(SERVICE_LABEL);
    // The tenant's labels stay on the container, under the platform's.
    expect(task.ContainerSpec?.Labels).toEqual({ 'com.example': 'x', ...expected });
    expect(spec.Name).toBe(`${names.service('')}-run-a1b2c3d4e5f6`);
    expect(spec.Name).toContain('--');
  });
});
