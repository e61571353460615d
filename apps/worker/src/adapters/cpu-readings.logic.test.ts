import { describe, expect, it } from 'vitest';
import { createCpuReadings, type CpuCounters } from './cpu-readings.js';

const SECOND = 1e9; // docker stats counts nanoseconds
/** A one-shot answer: the container's and the host's CPU time so far, no previous counters. */
const oneShot = (containerNs: number, hostNs: number, cpus = 2): CpuCounters => ({
  cpu_stats: { cpu_usage: { total_usage: containerNs }, system_cpu_usage: hostNs, online_cpus: cpus },
  precpu_stats: { cpu_usage: { total_usage: 0 }, system_cpu_usage: 0 },
});

describe('CPU use between two one-shot reads of a container', () => {
  it('is 0 at the first read, then the average since the previous read', () => {
    const readings = createCpuReadings();
    expect(readings.percentSince('a', oneShot(10 * SECOND, 1000 * SECOND))).toBe(0);
    // 30 s later on 2 CPUs the host counted 60 s of CPU time; the container used 15 s: half a CPU.
    expect(readings.percentSince('a', oneShot(25 * SECOND, 1060 * SECOND))).toBeCloseTo(50);
  });

  it('keeps each container apart', () => {
    const readings = createCpuReadings();
    readings.percentSince('a', oneShot(0, 0));
    readings.percentSince('b', oneShot(0, 0));
    expect(readings.percentSince('b', oneShot(60 * SECOND, 60 * SECOND))).toBeCloseTo(200);
    expect(readings.percentSince('a', oneShot(6 * SECOND, 60 * SECOND))).toBeCloseTo(20);
  });

  it('counts nothing when the counters went back (the container restarted)', () => {
    const readings = createCpuReadings();
    readings.percentSince('a', oneShot(50 * SECOND, 100 * SECOND));
    expect(readings.percentSince('a', oneShot(1 * SECOND, 130 * SECOND))).toBe(0);
    expect(readings.percentSince('a', oneShot(4 * SECOND, 160 * SECOND))).toBeCloseTo(20);
  });

  it("uses the engine's previous counters at a first read when it sent them", () => {
    const readings = createCpuReadings();
    const twoReadings: CpuCounters = {
      cpu_stats: { cpu_usage: { total_usage: 2 * SECOND }, system_cpu_usage: 12 * SECOND, online_cpus: 1 },
      precpu_stats: { cpu_usage: { total_usage: 1 * SECOND }, system_cpu_usage: 10 * SECOND },
    };
    expect(readings.percentSince('a', twoReadings)).toBeCloseTo(50);
  });

  it('forgets containers not read for ten minutes', () => {
    let now = 0;
    const readings = createCpuReadings(() => now);
    readings.percentSince('gone', oneShot(0, 0));
    now = 11 * 60_000;
    readings.percentSince('kept', oneShot(0, 0));
    expect(readings.size()).toBe(1);
    expect(readings.percentSince('gone', oneShot(30 * SECOND, 60 * SECOND))).toBe(0);
  });
});
