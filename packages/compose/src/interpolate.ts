import { child, entries, isRecord, type Problems } from './problems.js';

/**
 * Compose-style interpolation of `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?message}`, `${VAR?message}`, `${VAR:+alt}`, `${VAR+alt}` and `$$` (a literal `$`).
 * It runs on parsed string values, never on the YAML text, so a variable's value can never add
 * keys or structure to the document. Only the caller's variables are visible: the worker's own
 * environment must never leak into a tenant's containers. Error messages name variables, never
 * their values (values are often secrets).
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const MAX_NESTING = 8;

/**
 * Characters left for the interpolated document: a 3-character `${A}` can stand for a 64 KiB
 * value, so without a budget a 256 KiB document could interpolate to gigabytes.
 */
export interface InterpolationBudget {
  remaining: number;
  readonly limit: number;
}

export function interpolationBudget(limit: number): InterpolationBudget {
  return { remaining: limit, limit };
}

export function interpolateTree(
  value: unknown,
  variables: Record<string, string>,
  problems: Problems,
  budget: InterpolationBudget,
  path = '',
): unknown {
  if (budget.remaining < 0) return undefined;
  if (typeof value === 'string') {
    const out = interpolateString(
      value,
      variables,
      (message) => problems.add(path, message),
      budget.remaining,
    );
    budget.remaining -= out.length;
    if (budget.remaining < 0)
      problems.add(path, `after interpolation the document exceeds ${budget.limit / 1024 / 1024} MiB`);
    return out;
  }
  if (Array.isArray(value))
    return value.map((item, index) => interpolateTree(item, variables, problems, budget, child(path, index)));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of entries(value)) {
      Object.defineProperty(out, key, {
        value: interpolateTree(item, variables, problems, budget, child(path, key)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

export function interpolateString(
  text: string,
  variables: Record<string, string>,
  fail: (message: string) => void,
  maxLength = Infinity,
  depth = 0,
): string {
  // `${A:-${A:-${A:-…}}}` recurses once per level and rescans the rest each time: bound it.
  if (depth > MAX_NESTING) {
    fail(`interpolation nested deeper than ${MAX_NESTING} levels`);
    return '';
  }
  let out = '';
  let i = 0;
  // Checked per step, so one string of many `${A}` stops growing once it passes the budget.
  while (i < text.length && out.length <= maxLength) {
    const ch = text[i]!;
    if (ch !== '$') {
      out += ch;
      i += 1;
      continue;
    }
    const next = text[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next === '{') {
      const end = matchingBrace(text, i + 2);
      if (end < 0) {
        fail('unterminated ${ in interpolation; write $$ for a literal $');
        return out;
      }
      out += expandBraced(text.slice(i + 2, end), variables, fail, maxLength - out.length, depth);
      i = end + 1;
      continue;
    }
    const bare = NAME.exec(text.slice(i + 1));
    if (!bare) {
      fail('invalid interpolation: a $ must start a variable reference; write $$ for a literal $');
      return out;
    }
    out += lookup(bare[0], variables, fail);
    i += 1 + bare[0].length;
  }
  return out;
}

/** Index of the `}` closing a `${` whose content starts at `start`, honouring nested `${...}`. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    if (text[i] === '$' && text[i + 1] === '$') {
      i += 1;
    } else if (text[i] === '$' && text[i + 1] === '{') {
      depth += 1;
      i += 1;
    } else if (text[i] === '}') {
      if (depth === 0) return i;
      depth -= 1;
    }
  }
  return -1;
}

function expandBraced(
  body: string,
  variables: Record<string, string>,
  fail: (message: string) => void,
  maxLength: number,
  depth: number,
): string {
  const name = NAME.exec(body)?.[0];
  if (!name) {
    fail(`invalid interpolation \${${body.slice(0, 40)}}: expected a variable name`);
    return '';
  }
  const rest = body.slice(name.length);
  if (rest === '') return lookup(name, variables, fail);
  const operator = /^(:-|-|:\?|\?|:\+|\+)/.exec(rest)?.[0];
  if (!operator) {
    fail(`invalid interpolation \${${name}${rest.slice(0, 20)}}: unsupported modifier`);
    return '';
  }
  const argument = () =>
    interpolateString(rest.slice(operator.length), variables, fail, maxLength, depth + 1);
  const isSet = Object.hasOwn(variables, name);
  const value = isSet ? variables[name]! : '';
  // A leading colon means "unset or empty"; without it only "unset" counts.
  const isMissing = operator.startsWith(':') ? value === '' : !isSet;
  switch (operator) {
    case ':-':
    case '-':
      return isMissing ? argument() : value;
    case ':?':
    case '?':
      if (isMissing) {
        const detail = argument();
        fail(`required variable ${name} is not set${detail ? `: ${detail}` : ''}`);
      }
      return value;
    default:
      return isMissing ? '' : argument();
  }
}

function lookup(name: string, variables: Record<string, string>, fail: (message: string) => void): string {
  if (!Object.hasOwn(variables, name)) {
    fail(`variable ${name} is not set`);
    return '';
  }
  return variables[name]!;
}
