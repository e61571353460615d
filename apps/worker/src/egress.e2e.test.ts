import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerImageBuilder } from './adapters/docker-image-builder.js';
import { ImageBuildError } from './adapters/image-builder.js';
import { EGRESS_CHAIN, HOST_CHAIN } from './egress/egress-policy.js';
import { BUILD_BRIDGE, BUILD_NETWORK } from './egress/sandbox-bridges.js';
import { serviceObjects } from './pipeline/service-objects.js';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { probeFrom, requestCommand } from './testing/egress-probe.js';
import { startStandIn, type StandIn } from './testing/netns-standin.js';
import { CADDY_ADMIN_URL, viaCaddy } from './testing/network-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Tenant code (a service container deployed by the real worker, a build RUN step on the real
// engine) against stand-ins the test builds: a server in its own network namespace on a
// link-local address (the cloud metadata service) and servers on addresses of the host (bridge
// gateways, an extra host address). Refused under the policy; reachable without it (same probe,
// same container, the policy bypassed for its bridge only), which shows the test can fail.
const run = promisify(execFile);
const iptables = (args: string[]) => run('iptables', args);
const ip6tables = (args: string[]) => run('ip6tables', args);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const id = randomUUID().slice(0, 8);
const plainNetwork = `hostctl-test-plain-${id}`;
const cleanups: (() => Promise<unknown>)[] = [];
let standIn: StandIn;
let plainBridge = '';
let buildGateway = '';
const { db, app, created, prefix } = useWorkerApp('egress', {
  env: { CADDY_ADMIN_URL, EGRESS_POLICY: 'enforce' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  hookTimeoutMs: 60_000,
  beforeStart: async () => {
    standIn = await startStandIn();
    cleanups.push(() => standIn.close());
    await docker.createNetwork({
      Name: plainNetwork,
      Driver: 'bridge',
      Labels: { 'hostctl-test': 'egress' },
    });
    cleanups.push(() => docker.getNetwork(plainNetwork).remove());
    plainBridge = `br-${(await docker.getNetwork(plainNetwork).inspect()).Id.slice(0, 12)}`;
  },
  afterStart: async () => {
    buildGateway = await gatewayOf(BUILD_NETWORK);
    await standIn.listenOn(buildGateway);
  },
  cleanup: async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  },
});

async function gatewayOf(network: string): Promise<string> {
  const info = await docker.getNetwork(network).inspect();
  return (info as { IPAM: { Config: { Gateway: string }[] } }).IPAM.Config[0]!.Gateway;
}

const probe = (container: string, target: string) => probeFrom(docker, container, target, standIn.body);

describe('the worker installs the egress policy', () => {
  it('jumps to its chains from DOCKER-USER and INPUT for every tenant bridge', async () => {
    await iptables(['-w', '-C', 'DOCKER-USER', '-i', 'hct+', '-j', EGRESS_CHAIN]);
    await iptables(['-w', '-C', 'INPUT', '-i', 'hct+', '-j', HOST_CHAIN]);
    const { stdout } = await iptables(['-w', '-S', EGRESS_CHAIN]);
    expect(stdout).toContain('-d 169.254.0.0/16');
    expect(stdout).toContain('--dst-type LOCAL');
    // IPv6: the bridges carry the host's fe80:: addresses.
    await ip6tables(['-w', '-C', 'INPUT', '-i', 'hct+', '-j', HOST_CHAIN]);
    await ip6tables(['-w', '-C', 'FORWARD', '-i', 'hct+', '-j', HOST_CHAIN]);
  });

  it('builds on a dedicated, labelled build network whose bridge the policy covers', async () => {
    const info = await docker.getNetwork(BUILD_NETWORK).inspect();
    expect(info.Options).toMatchObject({ 'com.docker.network.bridge.name': BUILD_BRIDGE });
    expect(info.Labels).toMatchObject({ 'io.hostctl.managed': 'true', 'io.hostctl.role': 'build' });
    expect(existsSync(`/sys/class/net/${BUILD_BRIDGE}`)).toBe(true);
  });

  it('covers a service network created before bridges were named hct… (upgrade)', async () => {
    const legacy = `hostctl-test-legacy-${id}`;
    const network = await docker.createNetwork({
      Name: legacy,
      Driver: 'bridge',
      Labels: { 'io.hostctl.managed': 'true', 'io.hostctl.service-id': randomUUID() },
    });
    const bridge = `br-${network.id.slice(0, 12)}`;
    const jumps = [
      ['DOCKER-USER', '-i', bridge, '-j', EGRESS_CHAIN],
      ['INPUT', '-i', bridge, '-j', HOST_CHAIN],
    ];
    try {
      await app.reconciler.runOnce();
      for (const jump of jumps) await iptables(['-w', '-C', ...jump]);
    } finally {
      for (const jump of jumps) await iptables(['-w', '-D', ...jump]).catch(() => undefined);
      await ip6tables(['-w', '-D', 'INPUT', '-i', bridge, '-j', HOST_CHAIN]).catch(() => undefined);
      await ip6tables(['-w', '-D', 'FORWARD', '-i', bridge, '-j', HOST_CHAIN]).catch(() => undefined);
      await docker
        .getNetwork(legacy)
        .remove()
        .catch(() => undefined);
    }
  });

  it('the reconciler puts back rules a firewall or Docker restart removed', async () => {
    await iptables(['-w', '-D', 'DOCKER-USER', '-i', 'hct+', '-j', EGRESS_CHAIN]);
    await iptables(['-w', '-F', HOST_CHAIN]);
    await app.reconciler.runOnce();
    await iptables(['-w', '-C', 'DOCKER-USER', '-i', 'hct+', '-j', EGRESS_CHAIN]);
    expect((await iptables(['-w', '-S', HOST_CHAIN])).stdout).toContain('-j REJECT');
  });
});

describe('a service container', () => {
  let web = '';
  let bridge = '';
  let name = '';
  let gateway = '';

  beforeAll(async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n  other:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    const set = serviceObjects(service.serviceId, prefix).set(service.deploymentId);
    web = set.container('web');
    bridge = set.bridge;
    name = (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).name;
    gateway = await gatewayOf(set.network);
    await standIn.listenOn(gateway);
  }, 120_000);

  const targets = () => ({
    'link-local (metadata) server': `${standIn.linkLocal} ${standIn.port}`,
    'host address': `${standIn.hostAddress} ${standIn.port}`,
    "its own network's gateway (the host)": `${gateway} ${standIn.port}`,
    "the build network's gateway (the host)": `${buildGateway} ${standIn.port}`,
  });

  it('sits on a tenant bridge', () => {
    expect(existsSync(`/sys/class/net/${bridge}`)).toBe(true);
  });

  it('cannot reach the host or link-local addresses', async () => {
    for (const [what, url] of Object.entries(targets())) {
      expect({ what, reached: (await probe(web, url)).reached }).toEqual({ what, reached: false });
    }
  });

  it('reaches each of them with the policy bypassed for its bridge (the probe can succeed)', async () => {
    const bypass = [
      ['DOCKER-USER', '1', '-i', bridge, '-j', 'RETURN'],
      ['INPUT', '1', '-i', bridge, '-j', 'ACCEPT'],
    ];
    for (const rule of bypass) await iptables(['-w', '-I', ...rule]);
    try {
      for (const [what, url] of Object.entries(targets())) {
        expect({ what, reached: (await probe(web, url)).reached }).toEqual({ what, reached: true });
      }
    } finally {
      for (const [chain, , ...rule] of bypass) await iptables(['-w', '-D', chain!, ...rule]);
    }
    expect((await probe(web, targets()['host address'])).reached).toBe(false);
  });

  it('still talks to its own services by name (Docker DNS) and is reachable through Caddy', async () => {
    expect((await probe(web, 'other 8080')).output).toContain('hello from busybox');
    expect(await viaCaddy(`${name}.apps.localhost`)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });
});

describe('a build', () => {
  const builder = createDockerImageBuilder({ socketPath: '/var/run/docker.sock' });
  const tags: string[] = [];

  async function build(dockerfile: string, network?: string) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hostctl-egress-build-'));
    const tag = `hostctl-test-egress-${id}:${tags.length}`;
    tags.push(tag);
    await writeFile(path.join(dir, 'Dockerfile'), dockerfile);
    const lines: string[] = [];
    const use = network
      ? createDockerImageBuilder({
          socketPath: '/var/run/docker.sock',
          network: { name: network, bridge: plainBridge },
        })
      : builder;
    try {
      await use.build(
        { contextDir: dir, dockerfile: 'Dockerfile', tag, labels: {} },
        (line) => lines.push(line),
        AbortSignal.timeout(60_000),
      );
      return { ok: true, lines };
    } catch (error) {
      if (!(error instanceof ImageBuildError)) throw error;
      return { ok: false, lines, message: error.message };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  afterAll(async () => {
    for (const tag of tags)
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
  });

  const targets = () => [
    `${standIn.linkLocal} ${standIn.port}`,
    `${standIn.hostAddress} ${standIn.port}`,
    `${buildGateway} ${standIn.port}`,
  ];
  // The step fails unless the stand-in answered.
  const fetchStep = (target: string) =>
    `FROM ${TEST_IMAGE}\nRUN ${requestCommand(target)} > /tmp/out; cat /tmp/out; grep -q 'stand-in' /tmp/out\n`;

  it('runs its RUN steps on the build network', async () => {
    const result = await build(`FROM ${TEST_IMAGE}\nRUN ip route\n`);
    expect(result.ok).toBe(true);
    expect(result.lines.join('\n')).toContain(`default via ${buildGateway}`);
  }, 60_000);

  it('a RUN step cannot reach the host or link-local addresses', async () => {
    for (const url of targets()) {
      const result = await build(fetchStep(url));
      expect({ url, ok: result.ok }).toEqual({ url, ok: false });
      expect(result.lines.join('\n')).not.toContain(standIn.body);
    }
  }, 120_000);

  it('the same RUN step on a network without the policy reaches them (the probe can succeed)', async () => {
    for (const url of targets()) {
      const result = await build(fetchStep(url), plainNetwork);
      expect({ url, ok: result.ok }).toEqual({ url, ok: true });
      expect(result.lines.join('\n')).toContain(standIn.body);
    }
  }, 120_000);

  it('ADD from a URL is refused before the daemon fetches anything', async () => {
    const before = standIn.hits();
    for (const dockerfile of [
      `FROM ${TEST_IMAGE}\nADD http://${standIn.hostAddress}:${standIn.port}/ /x\n`,
      `FROM ${TEST_IMAGE}\nadd \\\n  ["http://127.0.0.1:2019/config/", "/caddy.json"]\n`,
      `# escape=\`\nFROM ${TEST_IMAGE}\nADD --chown=0:0 \`\n  "http://${standIn.hostAddress}:${standIn.port}/" /x\n`,
    ]) {
      const result = await build(dockerfile);
      expect(result).toMatchObject({
        ok: false,
        message: expect.stringMatching(/Dockerfile line \d+: ADD from a URL/),
      });
      expect(result.lines).toEqual([]);
    }
    expect(standIn.hits()).toBe(before);
  }, 60_000);
});
