/**
 * Input rules every route shares, applied by the validator compiler (validation.ts), so that no
 * handler can forget them: NUL-free text, bounded integers, and timestamps in a sane range.
 */

/** PostgreSQL int4: the type of every integer column the API filters on (seq, counts, pages). */
export const INT4_MAX = 2_147_483_647;
export const INT4_MIN = -2_147_483_648;

const boundedCopies = new WeakMap<object, unknown>();

/**
 * A copy of the schema in which every integer without its own bounds gets int4's: a query value
 * of `99999999999999999999` is a 400 naming the field instead of a database error. A schema that
 * needs more range declares its own minimum/maximum.
 */
export function withIntegerBounds<T>(schema: T): T {
  // One copy per schema object: a shared schema (with an $id) compiled twice would be refused by ajv.
  if (schema !== null && typeof schema === 'object') {
    const cached = boundedCopies.get(schema);
    if (cached) return cached as T;
  }
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) copy[key] = visit(value);
    if (copy.type === 'integer') {
      copy.maximum ??= INT4_MAX;
      copy.minimum ??= INT4_MIN;
    }
    return copy;
  };
  const copy = visit(schema) as T;
  if (schema !== null && typeof schema === 'object') boundedCopies.set(schema, copy);
  return copy;
}

/**
 * JSON pointer of the first string (value or key) holding a NUL character, or undefined.
 * Iterative: a deeply nested body must not overflow the stack here.
 */
export function findNul(data: unknown): string | undefined {
  const stack: [unknown, string][] = [[data, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return path;
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => stack.push([item, `${path}/${index}`]));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        const at = `${path}/${escapePointer(key)}`;
        if (key.includes('\u0000')) return at;
        stack.push([value, at]);
      }
    }
  }
  return undefined;
}

const escapePointer = (key: string) =>
  key
    .replace(/~/g, '~0')
    .replace(/\//g, '~1')
    .replace(/\u0000/g, '\\u0000');

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 date-time that exists (no 30 February, no hour 25) in years 0001–9999; a leap
 * second (:60) is read as :59. Year 0000, expanded years (`+275760-…`), date-only values and
 * offsets beyond ±23:59 are refused.
 */
export function isSaneTimestamp(value: string): boolean {
  const match = RFC3339.exec(value);
  if (!match) return false;
  const [, y, mo, d, h, mi, s, , zone, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const isLeap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 ? (isLeap ? 29 : 28) : daysInMonth)) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return false;
  if (zone !== 'Z' && zone !== 'z' && (Number(oh) > 23 || Number(om) > 59)) return false;
  return Number.isFinite(Date.parse(value.replace(/:60(?=[.Zz+-])/, ':59')));
}

/** Parses a timestamp that passed isSaneTimestamp; a leap second counts as the second before. */
export function parseTimestamp(value: string): Date {
  return new Date(value.replace(/:60(?=[.Zz+-])/, ':59'));
}
