import type { Db } from '../client.js';
import type { User } from '../generated/client.ts';

export type OidcIdentityStore = ReturnType<typeof createOidcIdentityStore>;

/** How a sign-in at the identity provider finds, links or creates its user. Identity is issuer + subject. */
export function createOidcIdentityStore(db: Db) {
  return {
    findBySubject(issuer: string, subject: string): Promise<User | null> {
      return db.user.findUnique({
        where: { oidcIssuer_oidcSubject: { oidcIssuer: issuer, oidcSubject: subject } },
      });
    },

    /** Emails are compared case-insensitively: providers do not agree on case. */
    findByEmail(email: string): Promise<User | null> {
      return db.user.findFirst({
        where: { email: { equals: email, mode: 'insensitive' } },
        orderBy: { createdAt: 'asc' },
      });
    },

    /**
     * Links a pre-provisioned user to a provider identity. Only a user not linked yet is updated, so
     * two racing first sign-ins cannot overwrite each other; false when the link did not happen.
     */
    async linkSubject(userId: string, issuer: string, subject: string): Promise<boolean> {
      const result = await db.user.updateMany({
        where: { id: userId, oidcIssuer: null, oidcSubject: null },
        data: { oidcIssuer: issuer, oidcSubject: subject },
      });
      return result.count === 1;
    },

    /** An unknown user allowed in by OIDC_UNKNOWN_USERS=viewer: a viewer with no customer sees nothing yet. */
    createViewer(input: { email: string; name: string; issuer: string; subject: string }): Promise<User> {
      return db.user.create({
        data: {
          email: input.email,
          name: input.name,
          role: 'viewer',
          customerId: null,
          oidcIssuer: input.issuer,
          oidcSubject: input.subject,
        },
      });
    },
  };
}
