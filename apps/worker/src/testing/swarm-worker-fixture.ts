import { createSwarmRuntime } from '../adapters/swarm-runtime.js';
import { CADDY_ADMIN_URL } from './network-fixtures.js';
import { swarmTestSocket } from './test-env.js';
import { useWorkerApp, type WorkerFixture, type WorkerFixtureOptions } from './worker-fixture.js';

/**
 * useWorkerApp with RUNTIME=swarm on the dev stack's swarm engine (scripts/lib/swarm-engine.sh),
 * pushing to the dev registry and routing through the real Caddy at `<name>.apps.localhost`. Its
 * teardown also removes the Swarm services, networks and volumes of every tracked service.
 */
export function useSwarmWorkerApp(label: string, options: WorkerFixtureOptions = {}): WorkerFixture {
  const socketPath = swarmTestSocket();
  const fixture = useWorkerApp(label, {
    ...options,
    env: {
      RUNTIME: 'swarm',
      SWARM_DOCKER_HOST: `unix://${socketPath}`,
      REGISTRY: '127.0.0.1:5000',
      CADDY_ADMIN_URL,
      PUBLIC_IP: '127.0.0.1',
      APPS_DOMAIN: 'apps.localhost',
      ...options.env,
    },
    cleanup: async () => {
      const swarm = createSwarmRuntime({
        socketPath,
        instance: fixture.prefix,
        timeoutMs: 30_000,
        monitorMs: 0,
      });
      for (const service of fixture.created) await swarm.tearDown(service.serviceId).catch(() => undefined);
      await options.cleanup?.();
    },
  });
  return fixture;
}
