import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import { QUEUES, createProducer, createRedis, jobIds } from '@hostctl/queue';
import { isGood, requireCaddy, startTraffic, tally, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import { REDIS_URL, runtimeEnv } from './env.js';
import {
  createReleaseService,
  operatorApi,
  release,
  soleSet,
  waitDeployment,
  type Api,
} from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';
import { swarmServicesOf, swarmTasksOf } from './workloads.js';

/**
 * Issue 17's fault case under RUNTIME=swarm, as operators run it: two worker replicas, and the one
 * running a release is SIGKILLed while Swarm replaces the service's task (the new release is slow
 * to pass its health check). The other takes the job over once its lock expires, finds the Swarm
 * service already on this release and waits for Swarm's verdict: the deployment succeeds and one
 * Swarm service of the release is left.
 *
 * Swarm carries the update on without the dead worker: once the new task is healthy it stops the
 * old one, which the dead worker's route pointed at. The kill is timed so that this happens before
 * the job can be taken over (its lock lives up to 10 s). Two things keep every request answered:
 * the standby of release 0 the release started (adapters/swarm-standby.ts) is still routed and
 * running, and the follower every worker runs (network/update-route-follower.ts) moves the route
 * to the running tasks. Before either existed: 102 of 4,390, 470 of 3,785 and 1,295 of 6,684
 * requests failed here. The resumed job removes the standby at its end. (Until the test stack
 * killed the app rather than its tsx wrapper, the "killed" worker lived on and this case
 * lost nothing for the wrong reason.)
 */
const READY_AFTER_S = 12;
const env = runtimeEnv('swarm');
let stack: Stack;
let api: Api;
let customerId: string;
let serviceId = '';

beforeAll(async () => {
  requireCaddy();
  stack = await startStack({ workers: 2, extraEnv: env });
  ({ api, customerId } = await operatorApi(stack, 'swarm-kill'));
});
afterAll(async () => {
  if (serviceId) await api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

/** The web component's Swarm service: not the standby the release holds meanwhile. */
const updateState = async (id: string) => {
  const service = (await swarmServicesOf(id)).find((item) => !item.Spec?.Labels?.[STANDBY_LABEL]);
  return { state: service?.UpdateStatus?.State ?? '', deployment: service?.Spec?.Labels?.[DEPLOYMENT_LABEL] };
};

/** The process id of the worker replica running the deployment's job (BullMQ's `processedBy`). */
async function jobHolder(deploymentId: string): Promise<number> {
  const connection = createRedis(REDIS_URL, 'worker');
  try {
    const producer = createProducer(connection, stack.env.QUEUE_PREFIX!);
    const job = await producer.queue(QUEUES.deployments).getJob(jobIds.deploy({ deploymentId }));
    const pid = Number(job?.processedBy?.split(':').at(-1));
    await producer.close();
    if (!Number.isInteger(pid)) throw new Error(`no worker holds the job of ${deploymentId}`);
    return pid;
  } finally {
    connection.disconnect();
  }
}

/** How long ago the deployment's newest task was created. */
async function newestTaskAgeMs(id: string, deploymentId: string): Promise<number> {
  const tasks = (await swarmTasksOf(id)) as {
    CreatedAt?: string;
    Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  }[];
  const created = tasks
    .filter((task) => task.Spec?.ContainerSpec?.Labels?.[DEPLOYMENT_LABEL] === deploymentId)
    .map((task) => Date.parse(task.CreatedAt ?? '') || 0);
  return created.length > 0 ? Date.now() - Math.max(...created) : 0;
}

describe('RUNTIME=swarm: a worker killed during a Swarm update', () => {
  let host: string;

  it('deploys release 0', async () => {
    const created = await createReleaseService(api, customerId, 'swarm-kill', { VERSION: '0' });
    ({ id: serviceId, host } = created);
    expect((await waitDeployment(api, created.deploymentId)).status).toBe('succeeded');
    expect((await eventually(() => viaCaddy(host), isGood)).body).toBe('release-0');
  });

  it('is taken over by the other worker, and no request fails meanwhile', async () => {
    const traffic = startTraffic(host);
    let takeoverMs = 0;
    let succeededAt = 0;
    try {
      // The new task is healthy READY_AFTER_S after it started: the kill lands 3 s before that,
      // so Swarm swaps the tasks while the job still belongs to the dead worker.
      const deploymentId = await release(api, serviceId, {
        VERSION: '1',
        READY_AFTER: String(READY_AFTER_S),
        HEALTH_GRACE: '30s',
      });
      await eventually(
        () => updateState(serviceId),
        (now) => now.deployment === deploymentId && now.state === 'updating',
        60_000,
      );
      const holder = await jobHolder(deploymentId);
      await eventually(
        () => newestTaskAgeMs(serviceId, deploymentId),
        (age) => age >= (READY_AFTER_S - 3) * 1000,
        60_000,
      );
      const killedAt = Date.now();
      expect(await stack.killWorkers(holder)).toBe(1);
      const outcome = await waitDeployment(api, deploymentId);
      expect(outcome.status, JSON.stringify(outcome)).toBe('succeeded');
      succeededAt = Date.now();
      takeoverMs = succeededAt - killedAt;
      expect(await soleSet(serviceId, 'swarm')).toBe(deploymentId);
      expect(await swarmServicesOf(serviceId)).toHaveLength(1);
      expect((await viaCaddy(host)).body).toBe('release-1');
      // A few more seconds of traffic after the success: all of it must answer.
      await new Promise((resolve) => setTimeout(resolve, 3000));
    } finally {
      await traffic.stop();
    }
    const seen = tally(traffic.answers);
    const failed = traffic.answers.filter((answer) => !isGood(answer));
    const windowMs = failed.length > 0 ? failed.at(-1)!.at - failed[0]!.at : 0;
    console.log(
      `[swarm worker kill] succeeded ${takeoverMs} ms after the kill; ${seen.total} requests, ${seen.bad.length} not 2xx within ${windowMs} ms: ${JSON.stringify(seen.bodies)}`,
    );
    expect(seen.bad).toEqual([]);
    expect(Object.keys(seen.bodies).sort()).toEqual(['release-0', 'release-1']);
  });
});
