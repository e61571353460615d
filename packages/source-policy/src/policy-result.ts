/**
 * Checks return a result instead of throwing: the API turns a refusal into a 400 naming the field,
 * the worker into a permanent deployment failure; neither wants exceptions for expected input.
 */
export type PolicyResult<T = object> = ({ ok: true } & T) | { ok: false; reason: string };

export const refuse = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });
