import { DomainError, type FieldError } from '@hostctl/domain';

/**
 * Collects every problem of a document so a tenant fixes them in one round trip instead of one
 * error per attempt. Paths are dotted (`services.web.volumes[0]`).
 */
export class Problems {
  /** A document with 100,000 bad entries must not become a 100,000-entry response. */
  static readonly MAX_LISTED = 100;
  readonly list: FieldError[] = [];
  private count = 0;

  add(path: string, message: string): void {
    this.count += 1;
    if (this.list.length < Problems.MAX_LISTED) this.list.push({ path: path || '(root)', message });
  }

  get isEmpty(): boolean {
    return this.count === 0;
  }

  /** Throws the collected problems as one invalid_compose error. */
  throwIfAny(): void {
    if (this.isEmpty) return;
    const first = this.list[0]!;
    const more = this.count > 1 ? ` (and ${this.count - 1} more)` : '';
    throw new DomainError('invalid_compose', `${first.path}: ${first.message}${more}`, { errors: this.list });
  }
}

export function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/** Own keys only: YAML may produce a literal `__proto__` key, which must be validated like any other. */
export function entries(value: Record<string, unknown>): [string, unknown][] {
  return Object.keys(value).map((key) => [key, value[key]]);
}
