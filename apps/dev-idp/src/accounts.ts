import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** One development account. `sub` is stable per email unless given explicitly. */
export interface DevAccount {
  sub: string;
  email: string;
  password: string;
  name: string;
  role?: 'admin' | 'operator' | 'viewer';
  customer?: string;
}

export interface AccountBook {
  all: readonly DevAccount[];
  bySub(sub: string): DevAccount | undefined;
  /** The account when email and password match; undefined otherwise (same work either way). */
  verify(email: string, password: string): DevAccount | undefined;
}

const ROLES = new Set(['admin', 'operator', 'viewer']);

/** Reads and validates an accounts file: `{ "accounts": [{ email, password, name, role?, customer?, sub? }] }`. */
export function loadAccounts(file: string): AccountBook {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { accounts?: unknown };
  if (!Array.isArray(parsed.accounts)) throw new Error(`${file}: expected { "accounts": [...] }`);
  const accounts = parsed.accounts.map((entry, i) => toAccount(entry, `${file}: accounts[${i}]`));
  const emails = new Set<string>();
  for (const account of accounts) {
    if (emails.has(account.email)) throw new Error(`${file}: duplicate account ${account.email}`);
    emails.add(account.email);
  }
  return {
    all: accounts,
    bySub: (sub) => accounts.find((account) => account.sub === sub),
    verify(email, password) {
      const wanted = email.trim().toLowerCase();
      const account = accounts.find((candidate) => candidate.email === wanted);
      // Compare digests in constant time, and compare something even for unknown emails.
      const matches = sameSecret(account?.password ?? '\u0000no-account', password);
      return account && matches ? account : undefined;
    },
  };
}

function toAccount(entry: unknown, where: string): DevAccount {
  const value = entry as Record<string, unknown>;
  const text = (key: string, required: boolean): string | undefined => {
    const field = value[key];
    if (field === undefined && !required) return undefined;
    if (typeof field !== 'string' || field.length === 0)
      throw new Error(`${where}.${key} must be a non-empty string`);
    return field;
  };
  const email = text('email', true)!.toLowerCase();
  const role = text('role', false);
  if (role !== undefined && !ROLES.has(role))
    throw new Error(`${where}.role must be admin, operator or viewer`);
  const customer = text('customer', false);
  return {
    sub: text('sub', false) ?? `dev-${createHash('sha256').update(email).digest('hex').slice(0, 16)}`,
    email,
    password: text('password', true)!,
    name: text('name', true)!,
    ...(role ? { role: role as DevAccount['role'] } : {}),
    ...(customer ? { customer } : {}),
  };
}

function sameSecret(expected: string, given: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(given));
}
