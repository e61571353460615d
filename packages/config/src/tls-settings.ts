import { Type } from 'typebox';
import { describe } from './describe.js';

/** The worker's ACME and HTTPS settings (docs/tls.md); HTTPS is off until ACME_DIRECTORY_URL is set. */
export const tlsSettings = {
  ACME_DIRECTORY_URL: describe(
    Type.String({ default: '' }),
    "ACME directory the wildcard certificate of APPS_DOMAIN is ordered from through DNS-01 on PowerDNS (docs/tls.md); empty: no certificate, plain HTTP only. The dev stack's pebble: https://127.0.0.1:14000/dir.",
  ),
  ACME_CA_CERT_FILE: describe(
    Type.String({ default: '' }),
    "PEM file trusted for the ACME directory's own HTTPS (a test CA such as pebble); empty: the system's trust.",
  ),
  CADDY_HTTPS_LISTEN: describe(
    Type.String({ default: '' }),
    'Address Caddy serves HTTPS on with the wildcard (e.g. 127.0.0.1:443), added to CADDY_SERVER_NAME next to its HTTP listener; empty: the certificate is loaded but no listener added.',
  ),
  TLS_CHECK_INTERVAL_MS: describe(
    Type.Integer({ default: 60000, minimum: 1000 }),
    'How often each worker checks the wildcard certificate (renewal at two thirds of its lifetime, one replica at a time) and that Caddy has it.',
  ),
};

/** The API's custom-domain claims (docs/tls.md#custom-domains). */
export const domainClaimSettings = {
  DOMAIN_CLAIM_TTL_HOURS: describe(
    Type.Integer({ default: 168, minimum: 1 }),
    'Hours a custom domain may stay pending (unverified) and still hold its name: after that, another service naming it in a PATCH takes it over and the stale claim is dropped (docs/tls.md#custom-domains). Verified domains never expire.',
  ),
};
