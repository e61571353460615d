import type Docker from 'dockerode';
import type { PlanContainer } from '@hostctl/compose';
import { DEPLOYMENT_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { EGRESS_PLACEMENT } from './swarm-egress-label.js';
import { swarmNames, swarmServiceSpec, swarmWarnings } from './swarm-spec.js';
import { failedTaskId, rolloutOf, type SwarmService, type SwarmTask } from './swarm-tasks.js';

const serviceId = '0f0e0d0c-0b0a-4090-8070-605040302010';
const names = swarmNames(serviceId, 'hostctl');
const release = { serviceId, deploymentId: 'dep-2', plan: { containers: [], volumes: [] } };
const web = (overrides: Partial<PlanContainer> = {}): PlanContainer => ({
  name: 'web',
  image: '127.0.0.1:5000/app:2',
  environment: { A: '1' },
  labels: { [OWNER_LABEL]: 'false', 'com.example': 'x' },
  volumes: [],
  ports: [8080],
  dependsOn: [],
  restart: 'always',
  init: true,
  limits: { memoryBytes: 128 * 1024 * 1024, nanoCpus: 500_000_000, pids: 64 },
  ...overrides,
});
type ContainerTask = Docker.ContainerTaskSpec;

describe('swarmServiceSpec', () => {
  it('runs each component as a replicated dnsrr service on the service overlay, reachable by its name', () => {
    const spec = swarmServiceSpec(web({ replicas: 3 }), release, { names, monitorMs: 5000 });
    const task = spec.TaskTemplate as ContainerTask;
    expect(spec.Name).toBe(`${names.service('web')}`);
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 3 } });
    // No IPVS on this kernel kind: virtual IPs fail, DNS round robin works.
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
    expect(task.Networks).toEqual([{ Target: names.network, Aliases: ['web'] }]);
    expect(task.ContainerSpec?.Env).toEqual(['A=1']);
  });

  it("publishes the web component's port in host mode (the proxy dials each task), and no other component's", () => {
    const routed = {
      ...release,
      plan: { containers: [], volumes: [], web: { container: 'web', port: 8080 } },
    };
    expect(swarmServiceSpec(web(), routed, { names, monitorMs: 0 }).EndpointSpec).toEqual({
      Mode: 'dnsrr',
      Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishMode: 'host' }],
    });
    expect(swarmServiceSpec(web({ name: 'db' }), routed, { names, monitorMs: 0 }).EndpointSpec).toEqual({
      Mode: 'dnsrr',
    });
  });

  it('replaces start-first, rolls back on failure and watches for the stabilisation period', () => {
    const spec = swarmServiceSpec(web(), release, { names, monitorMs: 5000 });
    expect(spec.UpdateConfig).toMatchObject({
      Order: 'start-first',
      FailureAction: 'rollback',
      Monitor: 5e9,
    });
    expect(
      swarmServiceSpec(web({ updateOrder: 'stop-first' }), release, { names, monitorMs: 0 }).UpdateConfig
        ?.Order,
    ).toBe('stop-first');
  });

  it('keeps platform labels over tenant ones, and limits every task like a single-engine container', () => {
    const task = swarmServiceSpec(web(), release, { names, monitorMs: 0 }).TaskTemplate as ContainerTask;
    expect(task.ContainerSpec?.Labels).toMatchObject({
      [OWNER_LABEL]: 'true',
      [SERVICE_LABEL]: serviceId,
      [DEPLOYMENT_LABEL]: 'dep-2',
      'com.example': 'x',
    });
    expect(task.Resources?.Limits).toMatchObject({
      MemoryBytes: 128 * 1024 * 1024,
      NanoCPUs: 500_000_000,
      Pids: 64,
    });
    expect(task.ContainerSpec?.CapabilityDrop).toEqual(['ALL']);
    expect(task.ContainerSpec?.CapabilityAdd).not.toContain('NET_RAW');
  });

  it('pins a component with volumes to its volumes’ node and keeps tenant placement and reservations', () => {
    const container = web({
      volumes: [{ volume: 'data', target: '/data', readOnly: false }],
      placement: { constraints: ['node.labels.disk==ssd'], preferences: ['node.labels.zone'] },
      reservations: { memoryBytes: 1024 },
    });
    const task = swarmServiceSpec(container, release, { names, monitorMs: 0, volumeNode: 'node-a' })
      .TaskTemplate as ContainerTask;
    expect(task.Placement).toEqual({
      Constraints: ['node.labels.disk==ssd', 'node.id==node-a'],
      Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }],
    });
    expect(task.Resources?.Reservations).toEqual({ MemoryBytes: 1024 });
    expect(task.ContainerSpec?.Mounts?.[0]).toMatchObject({ Source: names.volume('data'), Target: '/data' });
  });

  it('places every component on protected nodes first; a tenant constraint can only narrow that', () => {
    const container = web({ placement: { constraints: ['node.role==manager'], preferences: [] } });
    const spec = (platformConstraints?: string[]) =>
      swarmServiceSpec(container, release, {
        names,
        monitorMs: 0,
        ...(platformConstraints ? { platformConstraints } : {}),
      }).TaskTemplate as ContainerTask;
    expect(spec([EGRESS_PLACEMENT]).Placement?.Constraints).toEqual([
      'node.labels.io.hostctl.egress==enforced',
      'node.role==manager',
    ]);
    expect(spec().Placement?.Constraints).toEqual(['node.role==manager']);
  });

  it('maps restart policies onto Swarm conditions', () => {
    const condition = (restart: PlanContainer['restart']) =>
      (swarmServiceSpec(web({ restart }), release, { names, monitorMs: 0 }).TaskTemplate as ContainerTask)
        .RestartPolicy?.Condition;
    expect([
      condition('no'),
      condition('on-failure'),
      condition('always'),
      condition('unless-stopped'),
    ]).toEqual(['none', 'on-failure', 'any', 'any']);
  });
});

describe('swarmWarnings', () => {
  it('names what Swarm cannot honour instead of dropping it', () => {
    const warnings = swarmWarnings({
      containers: [
        web({ dependsOn: ['db'], restart: 'unless-stopped' }),
        web({ name: 'db', replicas: 2, volumes: [{ volume: 'd', target: '/d', readOnly: false }] }),
      ],
      volumes: ['d'],
    });
    expect(warnings).toEqual([
      expect.stringContaining('services.web.depends_on'),
      expect.stringContaining('services.db.volumes'),
    ]);
    expect(swarmWarnings({ containers: [web()], volumes: [] })).toEqual([]);
  });
});

describe('rolloutOf', () => {
  const task = (deploymentId: string, state: string, err?: string): SwarmTask => ({
    ID: `${deploymentId}-${state}`,
    DesiredState: state === 'running' ? 'running' : 'shutdown',
    Spec: { ContainerSpec: { Labels: { [DEPLOYMENT_LABEL]: deploymentId } } },
    Status: { State: state, ...(err ? { Err: err } : {}) },
  });
  const service = (deploymentId: string, update?: Docker.UpdateStatus): SwarmService => ({
    ID: 's',
    Spec: { Labels: { [DEPLOYMENT_LABEL]: deploymentId }, Mode: { Replicated: { Replicas: 1 } } },
    ...(update ? { UpdateStatus: update } : {}),
  });

  it('is done when the replicas of this release run and the update completed', () => {
    expect(rolloutOf(service('dep-2'), [task('dep-2', 'running')], 'dep-2', web())).toEqual({ kind: 'done' });
    expect(
      rolloutOf(service('dep-2', { State: 'updating' }), [task('dep-2', 'running')], 'dep-2', web()).kind,
    ).toBe('pending');
  });

  it('reads a failed update from UpdateStatus, once the previous release runs again', () => {
    const rolledBack = service('dep-1', {
      State: 'rollback_completed',
      Message: 'update rolled back due to failure',
    });
    expect(rolloutOf(rolledBack, [task('dep-2', 'failed', 'exit 3')], 'dep-2', web()).kind).toBe('pending');
    expect(
      rolloutOf(rolledBack, [task('dep-2', 'failed', 'exit 3'), task('dep-1', 'running')], 'dep-2', web()),
    ).toEqual({
      kind: 'failed',
      // The failed task's own error says why; UpdateStatus only that Swarm rolled back.
      detail: 'the update failed (exit 3); Swarm rolled back to the previous release',
    });
    // Its tasks already pruned from the history: Swarm's message is all there is.
    expect(rolloutOf(rolledBack, [task('dep-1', 'running')], 'dep-2', web())).toEqual({
      kind: 'failed',
      detail:
        'the update failed (update rolled back due to failure); Swarm rolled back to the previous release',
    });
  });

  it('tells an image a node cannot pull from other failures', () => {
    const rejected = task('dep-2', 'rejected', 'No such image: 127.0.0.1:5000/app:2');
    expect(rolloutOf(service('dep-2'), [rejected], 'dep-2', web()).kind).toBe('image_unavailable');
    const crashed = [task('dep-2', 'failed', 'task: non-zero exit (3)')];
    expect(rolloutOf(service('dep-2'), crashed, 'dep-2', web({ restart: 'no' })).kind).toBe('failed');
    // A restarting component gets a few attempts before it counts as failed.
    expect(rolloutOf(service('dep-2'), crashed, 'dep-2', web()).kind).toBe('pending');
  });

  it('finds the task a failed update names', () => {
    expect(
      failedTaskId('update paused due to failure or early termination of task wgouw97wv6c0502dg5769wbmn'),
    ).toBe('wgouw97wv6c0502dg5769wbmn');
    expect(failedTaskId('rollback completed')).toBeUndefined();
  });
});
