import { isUniqueViolation, type OidcIdentityStore, type User } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import type { OidcIdentity } from './oidc-client.js';

export type UnknownUsersPolicy = 'reject' | 'viewer';

/**
 * Which user a provider identity signs in as. Identity is issuer + subject; an email only links a
 * pre-provisioned user that has never signed in, and only when the provider verified the email,
 * so nobody can take over an account by registering its address at another provider.
 */
export async function resolveUser(
  store: OidcIdentityStore,
  identity: OidcIdentity,
  unknownUsers: UnknownUsersPolicy,
): Promise<User> {
  const linked = await store.findBySubject(identity.issuer, identity.subject);
  if (linked) return linked;

  const email = identity.email?.trim() ?? '';
  const byEmail = email ? await store.findByEmail(email) : null;
  if (byEmail) {
    if (!identity.emailVerified) {
      throw new DomainError(
        'forbidden',
        'your identity provider has not verified your email address, so it cannot be linked to your account',
      );
    }
    if (byEmail.oidcIssuer !== null || byEmail.oidcSubject !== null) {
      throw new DomainError(
        'forbidden',
        'this email address is already linked to another sign-in identity; ask an administrator',
      );
    }
    if (await store.linkSubject(byEmail.id, identity.issuer, identity.subject)) {
      return { ...byEmail, oidcIssuer: identity.issuer, oidcSubject: identity.subject };
    }
    // Another first sign-in of the same person won the race: use what it linked.
    const winner = await store.findBySubject(identity.issuer, identity.subject);
    if (winner) return winner;
    throw new DomainError(
      'forbidden',
      'this email address is already linked to another sign-in identity; ask an administrator',
    );
  }

  if (unknownUsers === 'viewer' && email && identity.emailVerified) {
    try {
      return await store.createViewer({
        email,
        name: identity.name ?? email,
        issuer: identity.issuer,
        subject: identity.subject,
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const winner = await store.findBySubject(identity.issuer, identity.subject);
      if (winner) return winner;
      throw error;
    }
  }
  throw new DomainError('forbidden', 'you have no account here; ask an administrator to invite you');
}
