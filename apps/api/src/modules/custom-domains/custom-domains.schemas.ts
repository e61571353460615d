import { Type } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const CustomDomainItem = Type.Object({
  name: Type.String({ description: 'The domain as stored in custom_domains' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('active')], {
    description:
      'pending: not routed until verified; verified: routed over plain HTTP, its certificate not there yet; active: routed with its own certificate',
  }),
  verification: Type.Object({
    txt_name: Type.String({ description: 'Publish a TXT record here…' }),
    txt_value: Type.String({ description: '…with exactly this value' }),
    cname_target: Type.String({ description: 'Or make the domain a CNAME to this name' }),
  }),
  last_error: Nullable(Type.String({ description: 'Why the last check did not verify the domain' })),
  checked_at: Nullable(Timestamp),
  verified_at: Nullable(Timestamp),
  certificate: Nullable(
    Type.Object(
      {
        issuer: Nullable(Type.String({ description: 'The issuing CA, as its certificate names it' })),
        not_after: Nullable(Timestamp),
        last_error: Nullable(
          Type.String({ description: 'Why the last order or renewal failed; null after a success' }),
        ),
      },
      {
        description:
          'The certificate the platform obtained for the domain once verified; null before any order',
      },
    ),
  ),
});

export const CustomDomainList = Type.Object({ data: Type.Array(CustomDomainItem) });

/** The domain as the customer wrote it in custom_domains; compared after lower-casing. */
export const DomainParams = Type.Object(
  { id: Id, domain: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }) },
  { additionalProperties: false },
);
