import { describe, expect, it } from 'vitest';
import { createCounterDeltas } from './counter-deltas.js';

// What the history counts between two sweeps from the engine's per-container counters
// (docs/health-and-resources.md#history): nothing twice, nothing from before this sampler began.
const reading = (rx: number, restartCount: number) => ({
  networkRxBytes: rx,
  networkTxBytes: rx / 2,
  restartCount,
});

describe('counter deltas', () => {
  it('takes the first sweep as a baseline, then counts what grew', () => {
    const deltas = createCounterDeltas();
    expect(deltas.advance(new Map([['a', reading(1000, 2)]]))).toEqual(new Map());
    expect(deltas.advance(new Map([['a', reading(1600, 3)]])).get('a')).toEqual({
      networkRxBytes: 600,
      networkTxBytes: 300,
      restarts: 1,
    });
  });

  it('counts a container that appeared since the previous sweep whole, and a reset counter from 0', () => {
    const deltas = createCounterDeltas();
    deltas.advance(new Map([['a', reading(5000, 0)]]));
    const next = deltas.advance(
      new Map([
        ['a', reading(200, 0)], // its counters went down: the namespace was made again
        ['b', reading(700, 1)], // new since the previous sweep
      ]),
    );
    expect(next.get('a')).toEqual({ networkRxBytes: 200, networkTxBytes: 100, restarts: 0 });
    expect(next.get('b')).toEqual({ networkRxBytes: 700, networkTxBytes: 350, restarts: 1 });
  });

  it('a sweep without a reading keeps the older one, so nothing is counted twice or lost', () => {
    const deltas = createCounterDeltas();
    deltas.advance(new Map([['a', reading(100, 0)]]));
    // Listed but its stats read failed: no delta, and not a new baseline either.
    expect(deltas.advance(new Map([['a', {}]])).get('a')).toEqual({
      networkRxBytes: 0,
      networkTxBytes: 0,
      restarts: 0,
    });
    expect(deltas.advance(new Map([['a', reading(400, 1)]])).get('a')).toEqual({
      networkRxBytes: 300,
      networkTxBytes: 150,
      restarts: 1,
    });
  });
});
