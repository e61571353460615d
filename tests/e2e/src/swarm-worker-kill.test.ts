import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_LABEL } from '@hostctl/domain';
import { isGood, requireCaddy, startTraffic, tally, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import { runtimeEnv } from './env.js';
import {
  createReleaseService,
  operatorApi,
  release,
  soleSet,
  waitDeployment,
  type Api,
} from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';
import { swarmServicesOf } from './workloads.js';

/**
 * Issue 17's fault case under RUNTIME=swarm: the only worker is SIGKILLed while Swarm replaces a
 * service's task (the new release is slow to pass its health check). A worker started afterwards
 * takes the job over once its lock expires, finds the Swarm service already on this release and
 * waits for Swarm's verdict: the deployment succeeds and one Swarm service of the release is left.
 *
 * Requests are lost in between (docs/multi-host.md): the dead worker's follower was keeping the
 * route on the old task, and once the new task is healthy Swarm stops the old one by itself, so
 * the route points at a stopped task until the new worker routes again. What holds: no request
 * fails once the deployment has succeeded, and both releases answered. (Until the test stack
 * killed the app rather than its tsx wrapper, the "killed" worker lived on and this lost nothing.)
 */
const env = runtimeEnv('swarm');
let stack: Stack;
let api: Api;
let customerId: string;
let serviceId = '';

beforeAll(async () => {
  requireCaddy();
  stack = await startStack({ extraEnv: env });
  ({ api, customerId } = await operatorApi(stack, 'swarm-kill'));
});
afterAll(async () => {
  if (serviceId) await api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

const updateState = async (id: string) => {
  const [service] = await swarmServicesOf(id);
  return { state: service?.UpdateStatus?.State ?? '', deployment: service?.Spec?.Labels?.[DEPLOYMENT_LABEL] };
};

describe('RUNTIME=swarm: a worker killed during a Swarm update', () => {
  let host: string;

  it('deploys release 0', async () => {
    const created = await createReleaseService(api, customerId, 'swarm-kill', { VERSION: '0' });
    ({ id: serviceId, host } = created);
    expect((await waitDeployment(api, created.deploymentId)).status).toBe('succeeded');
    expect((await eventually(() => viaCaddy(host), isGood)).body).toBe('release-0');
  });

  it('is taken over by a new worker, and no request fails once the release has completed', async () => {
    const traffic = startTraffic(host);
    let takeoverMs = 0;
    let succeededAt = 0;
    try {
      // Ready only after 8 s: the kill lands while Swarm waits for the new task's health check.
      const deploymentId = await release(api, serviceId, {
        VERSION: '1',
        READY_AFTER: '8',
        HEALTH_GRACE: '20s',
      });
      await eventually(
        () => updateState(serviceId),
        (now) => now.deployment === deploymentId && now.state === 'updating',
        60_000,
      );
      const killedAt = Date.now();
      const killed = await stack.killWorkers();
      expect(killed).toBe(1);
      stack.startWorker();
      const outcome = await waitDeployment(api, deploymentId);
      expect(outcome.status, JSON.stringify(outcome)).toBe('succeeded');
      succeededAt = Date.now();
      takeoverMs = succeededAt - killedAt;
      expect(await soleSet(serviceId, 'swarm')).toBe(deploymentId);
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
    expect(tally(traffic.answers.filter((answer) => answer.at >= succeededAt)).bad).toEqual([]);
    expect(Object.keys(seen.bodies).sort()).toEqual(['release-0', 'release-1']);
  });
});
