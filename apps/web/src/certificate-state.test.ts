import { describe, expect, it } from 'vitest';
import { certificateState, daysUntil } from './certificate-state.ts';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const inDays = (days: number) => new Date(NOW + days * 86_400_000).toISOString();

describe('certificate state', () => {
  it('reads a certificate far from expiry as valid, with its days left', () => {
    expect(certificateState({ not_after: inDays(60.5), last_error: null }, NOW)).toEqual({
      kind: 'valid',
      label: 'valid',
      tone: 'ok',
      reason: null,
      daysLeft: '60 days',
    });
  });

  it('flags the last 14 days (the certificate.expiring window) in words', () => {
    expect(certificateState({ not_after: inDays(13.9), last_error: null }, NOW)).toMatchObject({
      kind: 'expiring',
      label: 'expiring soon',
      daysLeft: '13 days',
    });
    expect(certificateState({ not_after: inDays(14), last_error: null }, NOW).kind).toBe('valid');
    expect(certificateState({ not_after: inDays(0.5), last_error: null }, NOW).daysLeft).toBe(
      'less than a day',
    );
  });

  it('says expired, how long ago, even when the renewal failed too', () => {
    expect(certificateState({ not_after: inDays(-3), last_error: 'connection refused' }, NOW)).toMatchObject({
      kind: 'expired',
      label: 'expired',
      daysLeft: 'expired 3 days ago',
      reason: 'connection refused',
    });
    expect(certificateState({ not_after: inDays(-0.5), last_error: null }, NOW).daysLeft).toBe(
      'expired 1 day ago',
    );
  });

  it('shows a failed renewal with its reason while the current certificate still serves', () => {
    expect(certificateState({ not_after: inDays(30), last_error: 'ECONNREFUSED' }, NOW)).toMatchObject({
      kind: 'failed',
      label: 'renewal failed',
      reason: 'ECONNREFUSED',
      daysLeft: '30 days',
    });
  });

  it('tells a first order that failed from one not made yet', () => {
    expect(certificateState({ not_after: null, last_error: 'dns timeout' }, NOW)).toMatchObject({
      kind: 'failed',
      label: 'failed: no certificate',
      daysLeft: null,
    });
    expect(certificateState({ not_after: null, last_error: null }, NOW).label).toBe('not issued yet');
  });

  it('counts whole days down', () => {
    expect(daysUntil(inDays(1.99), NOW)).toBe(1);
    expect(daysUntil(inDays(-0.01), NOW)).toBe(-1);
  });
});
