import { createHmac } from 'node:crypto';

/**
 * `Hostctl-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
 * (docs/notifications.md#verifying-a-delivery). The timestamp is inside the MAC so a receiver can
 * refuse an old capture replayed later; the body is signed byte for byte as sent.
 */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
