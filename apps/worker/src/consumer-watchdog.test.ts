import { describe, expect, it } from 'vitest';
import { createConsumerWatchdog, type WatchedConsumer } from './consumer-watchdog.js';
import { silentLogger } from './testing/fixtures.js';

// The watchdog judges consumers from outside: fakes stand in for BullMQ workers and the queue.
function setup(options: { oldest?: string; busy?: number } = {}) {
  const state = { running: true, runs: 0, oldest: options.oldest, busy: options.busy ?? 0, restarts: 0 };
  const consumer: WatchedConsumer = {
    name: 'deployments',
    isRunning: () => state.running,
    run: async () => {
      state.runs += 1;
      state.running = true;
    },
  };
  const gauge = new Map<string, boolean>();
  const watchdog = createConsumerWatchdog({
    consumers: [consumer],
    concurrency: 2,
    oldestWaiting: async () => state.oldest,
    busy: () => state.busy,
    stuckAfterMs: 0,
    logger: silentLogger,
    metrics: {
      consuming: (queue, isConsuming) => gauge.set(queue, isConsuming),
      loopRestarted: () => (state.restarts += 1),
    },
  });
  return { state, watchdog, gauge };
}

describe('consumer watchdog', () => {
  it('restarts a consumer whose loop ended, reporting it until it runs again', async () => {
    const { state, watchdog, gauge } = setup();
    state.running = false;
    await watchdog.check();
    expect(state).toMatchObject({ runs: 1, restarts: 1 });
    expect(watchdog.liveness().isLive).toBe(false);
    expect(gauge.get('deployments')).toBe(false);
    await watchdog.check();
    expect(watchdog.liveness()).toEqual({ isLive: true, problems: [] });
  });

  it('is not live when the same job keeps waiting while a slot is free', async () => {
    const { watchdog } = setup({ oldest: 'deploy.1' });
    await watchdog.check();
    expect(watchdog.liveness().isLive).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await watchdog.check();
    expect(watchdog.liveness()).toEqual({
      isLive: false,
      problems: [
        expect.stringMatching(
          /^job deploy\.1 has waited \d+s in deployments while this replica had a free slot$/,
        ),
      ],
    });
  });

  it('does not blame a replica whose slots are all busy, or a queue that moves', async () => {
    const busy = setup({ oldest: 'deploy.1', busy: 2 });
    await busy.watchdog.check();
    await busy.watchdog.check();
    expect(busy.watchdog.liveness().isLive).toBe(true);

    const moving = setup({ oldest: 'deploy.1' });
    await moving.watchdog.check();
    moving.state.oldest = 'deploy.2';
    await moving.watchdog.check();
    expect(moving.watchdog.liveness().isLive).toBe(true);
  });
});
