/** Minimal `--flag value` parser: the CLI has few commands and must not grow a dependency for them. */
export interface ParsedArgs {
  positional: string[];
  /** The last value of each flag (`true` for a flag given without a value). */
  flags: Map<string, string | true>;
  /** Every value of each flag, in order: `--var A=1 --var B=2`. */
  repeated: Map<string, string[]>;
}

/**
 * Flags that never take a value, so `deploy --wait web` reads `web` as the service rather than as
 * the value of --wait.
 */
export const BOOLEAN_FLAGS: ReadonlySet<string> = new Set([
  'json',
  'wait',
  'follow',
  'yes',
  'timestamps',
  'token-stdin',
  'secret-key-stdin',
  'help',
  // Allows a token over plain http:// to a host other than loopback (client-config.ts tokenUrl).
  'insecure',
]);

export function parseArgs(argv: string[], booleans: ReadonlySet<string> = BOOLEAN_FLAGS): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  const repeated = new Map<string, string[]>();
  const set = (name: string, value: string | true) => {
    flags.set(name, value);
    if (typeof value === 'string') repeated.set(name, [...(repeated.get(name) ?? []), value]);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      set('help', true);
      continue;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const body = arg.slice(2);
    const equals = body.indexOf('=');
    const name = equals === -1 ? body : body.slice(0, equals);
    if (equals !== -1) {
      if (booleans.has(name)) throw new UsageError(`--${name} takes no value`);
      set(name, body.slice(equals + 1));
      continue;
    }
    const next = argv[i + 1];
    if (!booleans.has(name) && next !== undefined && !next.startsWith('--')) {
      set(name, next);
      i++;
    } else set(name, true);
  }
  return { positional, flags, repeated };
}

export class UsageError extends Error {}

export function requireFlag(args: ParsedArgs, name: string): string {
  const value = args.flags.get(name);
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags.get(name);
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return value;
}

/** A non-negative integer flag (`--timeout 300`, `--tail 50`), or undefined when absent. */
export function integerFlag(
  args: ParsedArgs,
  name: string,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const raw = optionalFlag(args, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > max)
    throw new UsageError(`--${name} must be a whole number from 0 to ${max}, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** Refuses flags a command does not know: a typo such as `--wiat` must not silently not wait. */
export function assertKnownFlags(args: ParsedArgs, known: readonly string[]): void {
  const allowed = new Set([...known, 'json', 'help', 'insecure']);
  const unknown = [...args.flags.keys()].filter((name) => !allowed.has(name));
  if (unknown.length > 0) throw new UsageError(`unknown option ${unknown.map((n) => `--${n}`).join(', ')}`);
}

/** Exactly N positional arguments after the command words. */
export function operands(args: ParsedArgs, skip: number, names: readonly string[]): string[] {
  const rest = args.positional.slice(skip);
  if (rest.length !== names.length)
    throw new UsageError(
      rest.length < names.length
        ? `missing ${names.slice(rest.length).join(' ')}`
        : `unexpected argument ${JSON.stringify(rest[names.length])}`,
    );
  return rest;
}
