import { describe, expect, it } from 'vitest';
import { quotaFigure, quotaFigures, quotaRefusalText } from './quota-figures.ts';

describe('quota figures', () => {
  it('reads a limited quota as "used of limit" with its bar at the usage', () => {
    expect(quotaFigure('services', 3, 5)).toMatchObject({
      label: 'Services',
      state: 'within',
      text: '3 of 5 services',
      flag: null,
      bar: { value: 3, max: 5, low: 4 },
    });
  });

  it('flags near, at and over the limit in words', () => {
    expect(quotaFigure('containers', 4, 5)).toMatchObject({ state: 'near', flag: 'near the limit' });
    expect(quotaFigure('containers', 5, 5)).toMatchObject({
      state: 'at',
      text: '5 of 5 containers',
      flag: 'at the limit',
    });
    // Lowering a quota below usage leaves usage over it: the bar is full, the text says how far.
    expect(quotaFigure('memory_mb', 1536, 1024)).toMatchObject({
      state: 'over',
      text: `${(1536).toLocaleString()} of ${(1024).toLocaleString()} MiB of memory`,
      flag: 'over the limit',
      bar: { value: 1024, max: 1024 },
    });
  });

  it('shows a limit of 0 as a full bar: nothing may be added', () => {
    expect(quotaFigure('deploys_per_hour', 0, 0)).toMatchObject({
      state: 'at',
      text: '0 of 0 deploys in the last hour',
      flag: 'at the limit',
      bar: { value: 1, max: 1 },
    });
  });

  it('says "unlimited" and draws no bar for a null limit', () => {
    expect(quotaFigure('services', 1, null)).toMatchObject({
      state: 'unlimited',
      text: '1 service, unlimited',
      flag: null,
      bar: null,
    });
  });

  it('keeps decimals of CPUs and names quotas it does not know by their key', () => {
    expect(quotaFigure('cpus', 0.5, 2).text).toBe(`${(0.5).toLocaleString()} of 2 CPUs`);
    expect(quotaFigure('api_keys', 2, 10)).toMatchObject({ label: 'API keys', text: '2 of 10 API keys' });
    expect(quotaFigure('log_bytes_per_day', 2, 10)).toMatchObject({
      label: 'Log bytes per day',
      text: '2 of 10 log bytes per day',
    });
  });

  it('words the build quotas', () => {
    expect(quotaFigure('concurrent_builds', 1, 2)).toMatchObject({
      label: 'Builds running at once',
      text: '1 of 2 builds running at once',
    });
    expect(quotaFigure('build_minutes_per_day', 96, 120)).toMatchObject({
      label: 'Build minutes in the last 24 hours',
      state: 'near',
      text: '96 of 120 build minutes in the last 24 hours',
    });
    expect(
      quotaRefusalText({ name: 'build_minutes_per_day', limit: 3, usage: 3, requested: 1, customerId: 'c' })
        .sentence,
    ).toBe(
      'The customer uses 3 of 3 build minutes in the last 24 hours and this asks for 1 more build minute in the last 24 hours.',
    );
  });

  it('lists every quota the API reports, a missing usage as 0', () => {
    const figures = quotaFigures({ limits: { services: 2, webhooks: null }, usage: { services: 2 } });
    expect(figures.map((row) => [row.name, row.text])).toEqual([
      ['services', '2 of 2 services'],
      ['webhooks', '0 push webhooks, unlimited'],
    ]);
  });
});

describe('quota refusals', () => {
  it('names the quota in words, its limit, the usage and what was asked for', () => {
    expect(
      quotaRefusalText({ name: 'api_keys', limit: 5, usage: 5, requested: 1, customerId: 'c-1' }),
    ).toEqual({
      title: 'Quota exceeded: API keys',
      sentence: 'The customer uses 5 of 5 API keys and this asks for 1 more API key.',
    });
    expect(
      quotaRefusalText({ name: 'memory_mb', limit: 256, usage: 200, requested: 100, customerId: 'c-1' })
        .sentence,
    ).toBe('The customer uses 200 of 256 MiB of memory and this asks for 100 more MiB of memory.');
    expect(
      quotaRefusalText({ name: 'webhooks', limit: 1, usage: 1, requested: 1, customerId: null }),
    ).toEqual({
      title: 'Quota exceeded: Push webhooks',
      sentence: 'You use 1 of 1 push webhook and this asks for 1 more push webhook.',
    });
  });
});
