import { Type, type Static } from 'typebox';
import { ROLES } from '@hostctl/domain';
import { PageQuery, Timestamp } from '../../http/schemas.js';
import { UserProfile } from '../../http/user-profile.js';
import { literals } from '../services/services.schemas.js';

export const Customer = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp });
export const CustomerList = Type.Object({
  data: Type.Array(Customer),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export const CreateCustomerBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$' }) },
  { additionalProperties: false },
);
export type CreateCustomerBody = Static<typeof CreateCustomerBody>;

export const UserList = Type.Object({
  data: Type.Array(UserProfile),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: literals(ROLES),
    customer_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;
export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: Type.Optional(literals(ROLES)),
    customer_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;
export const AdminPageQuery = Type.Object(PageQuery, { additionalProperties: false });
