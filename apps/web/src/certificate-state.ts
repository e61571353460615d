// How a platform certificate reads in the dashboard (docs/tls.md#certificate-state-in-the-api):
// its state in words, days left, with no clock inside so the tests pass `now`.

/** The same window as the `certificate.expiring` alert (docs/tls.md#alerts). */
export const EXPIRING_DAYS = 14;

const DAY_MS = 86_400_000;

interface CertificateFields {
  not_after: string | null;
  last_error: string | null;
}

type CertificateKind = 'valid' | 'expiring' | 'expired' | 'failed' | 'not_issued';

interface CertificateState {
  kind: CertificateKind;
  /** The state in words (the badge's text): never the colour alone. */
  label: string;
  /** The badge's colour cue (feedback.tsx's classes). */
  tone: 'ok' | 'busy' | 'bad' | 'idle';
  /** Why the last order failed, when it did. */
  reason: string | null;
  /** "in 42 days", "today", "expired 3 days ago"; null without a certificate. */
  daysLeft: string | null;
}

/** Whole days from now to `notAfter` (negative once past), rounded down. */
export function daysUntil(notAfter: string, now: number): number {
  return Math.floor((Date.parse(notAfter) - now) / DAY_MS);
}

function daysText(days: number): string {
  if (days < 0) return `expired ${-days} day${days === -1 ? '' : 's'} ago`;
  if (days === 0) return 'less than a day';
  return `${days} day${days === 1 ? '' : 's'}`;
}

/**
 * Expired beats everything (nothing valid serves); then a failed renewal (the current certificate
 * still serves, the reason is what to fix); then expiring within the alert window; else valid.
 */
export function certificateState(cert: CertificateFields, now: number): CertificateState {
  const reason = cert.last_error;
  if (cert.not_after === null) {
    return reason === null
      ? { kind: 'not_issued', label: 'not issued yet', tone: 'idle', reason, daysLeft: null }
      : { kind: 'failed', label: 'failed: no certificate', tone: 'bad', reason, daysLeft: null };
  }
  const days = daysUntil(cert.not_after, now);
  const daysLeft = daysText(days);
  if (Date.parse(cert.not_after) <= now)
    return { kind: 'expired', label: 'expired', tone: 'bad', reason, daysLeft };
  if (reason !== null) return { kind: 'failed', label: 'renewal failed', tone: 'bad', reason, daysLeft };
  if (days < EXPIRING_DAYS)
    return { kind: 'expiring', label: 'expiring soon', tone: 'busy', reason, daysLeft };
  return { kind: 'valid', label: 'valid', tone: 'ok', reason, daysLeft };
}
