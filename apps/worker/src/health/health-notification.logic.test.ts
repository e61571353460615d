import type { HealthStatus } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { healthNotification } from './health-monitor.js';

// Which health transitions reach notification subscribers (docs/notifications.md#events).
describe('healthNotification', () => {
  it.each<[HealthStatus, HealthStatus, string | undefined]>([
    ['healthy', 'unhealthy', 'service.unhealthy'],
    ['starting', 'unhealthy', 'service.unhealthy'],
    ['unknown', 'unhealthy', 'service.unhealthy'],
    ['unhealthy', 'healthy', 'service.recovered'],
    ['starting', 'healthy', undefined],
    ['unknown', 'healthy', undefined],
    ['unhealthy', 'unhealthy', undefined],
    ['healthy', 'healthy', undefined],
    ['unhealthy', 'starting', undefined],
    ['healthy', 'unknown', undefined],
  ])('%s → %s: %s', (previous, next, expected) => {
    expect(healthNotification(previous, next)).toBe(expected);
  });
});
