import { Type, type Static } from 'typebox';
import { ROLES } from '@hostctl/domain';
import type { User } from '@hostctl/db';
import { Timestamp } from './schemas.js';

/** The spec's user profile: GET /api/auth/me and the user administration endpoints. */
export const UserProfile = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Type.Unsafe<(typeof ROLES)[number]>({ type: 'string', enum: [...ROLES] }),
  customer_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
});
export type UserProfile = Static<typeof UserProfile>;

export function toUserProfile(user: User): UserProfile {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    customer_id: user.customerId,
    created_at: user.createdAt.toISOString(),
  };
}
