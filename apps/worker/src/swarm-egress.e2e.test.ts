import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { EGRESS_NODE_LABEL, EGRESS_PLACEMENT } from './adapters/swarm-egress-label.js';
import { SWARM_GATEWAY_NETWORK } from './adapters/swarm-gateway.js';
import { EGRESS_CHAIN, HOST_CHAIN } from './egress/egress-policy.js';
import { probeFrom } from './testing/egress-probe.js';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { startStandIn, type StandIn } from './testing/netns-standin.js';
import { viaCaddy } from './testing/network-fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE, swarmTestSocket } from './testing/test-env.js';
import { useSwarmWorkerApp } from './testing/swarm-worker-fixture.js';

// RUNTIME=swarm with EGRESS_POLICY=enforce: a Swarm task (deployed by the real worker on the
// swarm engine of the dev stack) leaves its overlay through docker_gwbridge, a bridge the tenant
// wildcard `hct+` does not match. The worker covers it too: the task cannot reach the host
// (docker_gwbridge's gateway, another host address) nor a link-local "metadata" server; with the
// policy bypassed for that bridge alone, the same probe from the same task reaches each of them.
const run = promisify(execFile);
const iptables = (args: string[]) => run('iptables', ['-w', ...args]);
const socketPath = swarmTestSocket();
const swarmEngine = new Docker({ socketPath });
let standIn: StandIn;
const worker = useSwarmWorkerApp('swarm-egress', {
  env: { EGRESS_POLICY: 'enforce', RELEASE_STABILIZATION_MS: '1000' },
  app: { observe: false, readiness: { timeoutMs: 60_000, stableMs: 300 } },
  hookTimeoutMs: 60_000,
  beforeStart: async () => {
    standIn = await startStandIn();
  },
  cleanup: async () => standIn?.close(),
});
const { db, app } = worker;

async function managerNode() {
  const info = (await swarmEngine.info()) as { Swarm: { NodeID: string } };
  return (await swarmEngine.getNode(info.Swarm.NodeID).inspect()) as {
    Spec: { Labels?: Record<string, string> };
  };
}

async function gatewayNetwork(): Promise<{ bridge: string; gateway: string; subnet: string }> {
  const info = (await swarmEngine.getNetwork(SWARM_GATEWAY_NETWORK).inspect()) as {
    Options?: Record<string, string>;
    IPAM: { Config: { Gateway: string; Subnet: string }[] };
  };
  const { Gateway: gateway, Subnet: subnet } = info.IPAM.Config[0]!;
  return {
    bridge: info.Options?.['com.docker.network.bridge.name'] ?? SWARM_GATEWAY_NETWORK,
    gateway,
    subnet,
  };
}

describe('RUNTIME=swarm: the egress policy covers Swarm tasks', { timeout: 180_000 }, () => {
  let task = '';
  let gateway = { bridge: '', gateway: '', subnet: '' };

  it('deploys a Swarm service whose task sits behind docker_gwbridge', async () => {
    const service = worker.track(
      await createComposeService(db, {
        compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`,
      }),
    );
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId, 120_000);
    expect(deployment.status, (await deploymentLog(db, service.deploymentId)).join('\n')).toBe('succeeded');
    const [container] = await swarmEngine.listContainers({
      filters: { label: [`${SERVICE_LABEL}=${service.serviceId}`] },
    });
    task = container?.Id ?? '';
    expect(task).not.toBe('');

    gateway = await gatewayNetwork();
    await standIn.listenOn(gateway.gateway);
    // No NAT on the swarm engine: the metadata server answers the task's own address.
    await standIn.routeBack(gateway.subnet);
    // The host reaches the task through the proxy all along (replies of the host's connections).
    const name = (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).name;
    expect(await viaCaddy(`${name}.apps.localhost`)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });

  it('jumps to the policy from DOCKER-USER and INPUT for the gateway bridge', async () => {
    await iptables(['-C', 'DOCKER-USER', '-i', gateway.bridge, '-j', EGRESS_CHAIN]);
    await iptables(['-C', 'INPUT', '-i', gateway.bridge, '-j', HOST_CHAIN]);
  });

  // The label is not taken away first to see the start set it: Swarm would stop every constrained
  // task on the node at once (its constraint enforcer), other suites' included. The two-node test
  // shows a node going from unlabelled to labelled.
  it('labels the manager’s node as protected and places the service on protected nodes only', async () => {
    expect((await managerNode()).Spec.Labels?.[EGRESS_NODE_LABEL]).toBe('enforced');
    const [service] = await swarmEngine.listServices({
      filters: { label: [`${SERVICE_LABEL}=${worker.created[0]!.serviceId}`] },
    });
    expect(service?.Spec?.TaskTemplate?.Placement?.Constraints).toContain(EGRESS_PLACEMENT);
  });

  const targets = () => ({
    'link-local (metadata) server': `${standIn.linkLocal} ${standIn.port}`,
    'host address': `${standIn.hostAddress} ${standIn.port}`,
    "docker_gwbridge's gateway (the host)": `${gateway.gateway} ${standIn.port}`,
  });
  const probe = (target: string) => probeFrom(swarmEngine, task, target, standIn.body);

  it('a task cannot reach the host or link-local addresses', async () => {
    for (const [what, target] of Object.entries(targets()))
      expect({ what, reached: (await probe(target)).reached }).toEqual({ what, reached: false });
  });

  it('reaches each of them with the policy bypassed for the gateway bridge (the probe can succeed)', async () => {
    // Ahead of DOCKER-USER too: the development engine's FORWARD policy is DROP, and nothing of the
    // iptables-less swarm engine accepts its bridge's forwarded traffic.
    const bypass = [
      ['INPUT', '-i', gateway.bridge, '-j', 'ACCEPT'],
      ['FORWARD', '-i', gateway.bridge, '-j', 'ACCEPT'],
      ['FORWARD', '-o', gateway.bridge, '-j', 'ACCEPT'],
    ];
    for (const [chain, ...rule] of bypass) await iptables(['-I', chain!, '1', ...rule]);
    try {
      for (const [what, target] of Object.entries(targets()))
        expect({ what, reached: (await probe(target)).reached }).toEqual({ what, reached: true });
    } finally {
      for (const [chain, ...rule] of bypass) await iptables(['-D', chain!, ...rule]);
    }
    expect((await probe(targets()['host address'])).reached).toBe(false);
  });
});
