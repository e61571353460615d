import { randomUUID } from 'node:crypto';
import type Docker from 'dockerode';
import { createAdvisoryLocks } from '@hostctl/db';
import { DEPLOYMENT_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import { removeLeftoverStandbys } from '../runtime/swarm/leftover-standbys.js';
import { silentLogger } from '../testing/fixtures.js';
import { webPlan } from '../testing/plan-fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { standbyRefusal, standbySpec } from './swarm-standby.js';
import { observeComponent } from './swarm-tasks.js';

// The standby's spec and when there is none, as pure functions; the reconciler's removal of one a
// dead deployment left, with real advisory locks. That a standby answers while Swarm rolls a
// crashed release back: swarm-release.e2e.test.ts.
const web = webPlan('127.0.0.1:5000/hostctl/svc-web@sha256:' + 'a'.repeat(64)).containers[0]!;
const serving: Docker.ServiceSpec = {
  Name: 'hostctl-0123456789ab-web',
  Labels: { [DEPLOYMENT_LABEL]: 'release-1' },
  TaskTemplate: {
    ContainerSpec: { Image: web.image, Labels: { [DEPLOYMENT_LABEL]: 'release-1' }, Env: ['A=1'] },
    Networks: [{ Target: 'hostctl-0123456789ab-net', Aliases: ['web'] }],
    Placement: { Constraints: ['node.labels.tier==web'] },
    RestartPolicy: { Condition: 'any' },
  },
  Mode: { Replicated: { Replicas: 3 } },
  UpdateConfig: { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback' },
  EndpointSpec: { Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishMode: 'host' }] },
};

describe('the standby of the serving release', () => {
  it('is one task of the serving spec on the same network and placement, never restarted, labelled apart', () => {
    const spec = standbySpec(serving, 'hostctl-0123456789ab--standby');
    expect(spec).toEqual({
      Name: 'hostctl-0123456789ab--standby',
      Labels: { [DEPLOYMENT_LABEL]: 'release-1', [STANDBY_LABEL]: 'true' },
      TaskTemplate: {
        ContainerSpec: {
          Image: web.image,
          Labels: { [DEPLOYMENT_LABEL]: 'release-1', [STANDBY_LABEL]: 'true' },
          Env: ['A=1'],
        },
        Networks: [{ Target: 'hostctl-0123456789ab-net', Aliases: ['web'] }],
        Placement: { Constraints: ['node.labels.tier==web'] },
        RestartPolicy: { Condition: 'none' },
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: serving.EndpointSpec,
    });
  });

  it('is observed as a standby: its endpoint counts while it runs, it is no release of the plan', () => {
    const spec = standbySpec(serving, 'hostctl-0123456789ab--standby');
    const observed = observeComponent({ ID: 's1', Spec: spec }, [], new Map());
    expect(observed).toMatchObject({ standby: true, deploymentId: 'release-1' });
    expect(observeComponent({ ID: 's2', Spec: serving }, [], new Map()).standby).toBeUndefined();
  });

  it('is refused where two writers on one volume could meet, unless the compose asks start-first', () => {
    const mount = { source: 'data', target: '/data' } as never;
    expect(standbyRefusal(web)).toBeNull();
    expect(standbyRefusal({ ...web, updateOrder: 'stop-first' })).toMatch(/replaced stop-first/);
    expect(standbyRefusal({ ...web, volumes: [mount] })).toMatch(/mounts a volume/);
    expect(standbyRefusal({ ...web, volumes: [mount], updateOrder: 'start-first' })).toBeNull();
  });
});

describe('a standby left behind', () => {
  const jobReplica = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
  const reconcilerReplica = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
  afterAll(async () => {
    await jobReplica.close();
    await reconcilerReplica.close();
  });

  it('goes once its deployment is over and no job holds the service; stays while one may resume', async () => {
    const [over, inFlight, locked] = [randomUUID(), randomUUID(), randomUUID()];
    const released: string[] = [];
    const deps = {
      standby: {
        held: async () => [over, inFlight, locked],
        release: async (serviceId: string) => void released.push(serviceId),
      },
      locks: reconcilerReplica,
      deployments: {
        lastSucceeded: async () => null,
        inFlightIds: async (serviceId: string) => (serviceId === inFlight ? [randomUUID()] : []),
      },
      services: { listLiveIds: async (ids: string[]) => new Set(ids) },
      instance: 'test',
      logger: silentLogger,
    };
    const lease = await jobReplica.tryAcquire(locked);
    try {
      expect(await removeLeftoverStandbys(deps)).toBe(1);
    } finally {
      await lease?.release();
    }
    expect(released).toEqual([over]);
  });
});
