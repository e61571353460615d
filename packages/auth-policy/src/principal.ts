import type { Role } from '@hostctl/domain';
import type { KeyLimits } from './key-limits.js';

/** The authenticated caller, however they authenticated. Permissions are read fresh per request. */
export interface Principal {
  userId: string;
  email: string;
  role: Role;
  /** Set for customer-scoped users: they only ever see this customer's resources. */
  customerId: string | null;
  via: 'session' | 'api_key';
  /** Present when via === 'session'. */
  sessionId?: string;
  /** Present when via === 'api_key'. */
  apiKeyId?: string;
  /** Present for a limited API key (a deploy token): what it is limited to, on top of the role. */
  limits?: KeyLimits;
}
