import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Principal } from '@hostctl/auth-policy';
import type { TlsCertificatesStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { problemResponses, Timestamp } from '../../http/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const CertificateList = Type.Object({
  data: Type.Array(
    Type.Object({
      name: Type.String({ description: 'The first DNS name, e.g. *.apps.example.com' }),
      issuer: Nullable(Type.String()),
      not_before: Nullable(Timestamp),
      not_after: Nullable(Timestamp),
      renew_after: Nullable(Timestamp),
      last_error: Nullable(Type.String({ description: 'Why the last order failed; null after a success' })),
      last_attempt_at: Nullable(Timestamp),
    }),
  ),
});

const iso = (date: Date | null) => date?.toISOString() ?? null;

/**
 * GET /api/certificates (beyond the spec; docs/tls.md): the platform's own certificates, with
 * their expiry and the last error. Platform-wide like nodes: a customer-scoped caller is refused.
 */
export function registerCertificateRoutes(
  instance: FastifyInstance,
  store: Pick<TlsCertificatesStore, 'listStates'>,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/certificates', {
    config: { permission: 'certificates:read' },
    schema: { response: { 200: CertificateList, ...problemResponses() } },
    handler: async (request) => {
      platformWide(principalOf(request));
      const rows = await store.listStates();
      return {
        data: rows.map((row) => ({
          name: row.name,
          issuer: row.issuer,
          not_before: iso(row.notBefore),
          not_after: iso(row.notAfter),
          renew_after: iso(row.renewAfter),
          last_error: row.lastError,
          last_attempt_at: iso(row.lastAttemptAt),
        })),
      };
    },
  });
}

function platformWide(principal: Principal): void {
  if (principal.customerId !== null) {
    throw new DomainError(
      'forbidden',
      'certificates are the platform’s; only users without a customer scope may see them',
    );
  }
}
