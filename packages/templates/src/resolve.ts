import { randomBytes } from 'node:crypto';
import { DomainError, type FieldError } from '@hostctl/domain';
import type { Template } from './catalog.js';

const SECRET_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/**
 * The variables a template deploy runs with: given values (checked against the declaration),
 * then defaults, then generated secrets. Every problem is reported at once, naming the variable.
 */
export function resolveTemplateVariables(
  template: Template,
  given: Record<string, string>,
): Record<string, string> {
  const errors: FieldError[] = [];
  const declared = new Set(template.variables.map((v) => v.name));
  for (const name of Object.keys(given)) {
    if (!declared.has(name))
      errors.push({
        path: `/body/variables/${name}`,
        message: `is not a variable of template ${template.id}`,
      });
  }
  const resolved: Record<string, string> = {};
  for (const variable of template.variables) {
    const value =
      given[variable.name] ??
      variable.default ??
      (variable.generate ? secret(variable.generate.length) : undefined);
    if (value === undefined) {
      if (variable.required)
        errors.push({ path: `/body/variables/${variable.name}`, message: 'is required by the template' });
      continue;
    }
    if (variable.pattern && !new RegExp(variable.pattern).test(value)) {
      errors.push({ path: `/body/variables/${variable.name}`, message: `must match ${variable.pattern}` });
      continue;
    }
    resolved[variable.name] = value;
  }
  if (errors.length > 0) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
      errors,
    });
  }
  return resolved;
}

/**
 * The template's password and key variables (declared `secret`, or `generate`d): a service keeps
 * each as a secret variable, whether it was generated, typed by the caller or sent as plain.
 */
export function secretVariableNames(template: Template): string[] {
  return template.variables.filter((v) => v.secret).map((v) => v.name);
}

function secret(length: number): string {
  let out = '';
  for (const byte of randomBytes(length * 2)) {
    if (out.length === length) break;
    // 228 = 4 * 57: rejecting higher bytes keeps every character equally likely.
    if (byte < 228) out += SECRET_ALPHABET[byte % SECRET_ALPHABET.length];
  }
  return out.length === length ? out : out + secret(length - out.length);
}
