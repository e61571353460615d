import { DomainError, type DeployMethod, type FieldError } from '@hostctl/domain';
import type { CreateServiceBody } from './services.schemas.js';

/** Fields each deploy method requires, and those it accepts (docs/api-decisions.md#create). */
const METHOD_FIELDS: Record<
  DeployMethod,
  { required: (keyof CreateServiceBody)[]; optional: (keyof CreateServiceBody)[] }
> = {
  template: { required: ['template_id'], optional: ['variables'] },
  git: { required: ['git_url'], optional: ['git_branch', 'variables'] },
  compose: { required: ['compose'], optional: ['variables'] },
  ai: { required: ['ai_url'], optional: ['variables'] },
};

const METHOD_SPECIFIC: (keyof CreateServiceBody)[] = [
  'template_id',
  'git_url',
  'git_branch',
  'compose',
  'ai_url',
];

/** Checks the per-method field rules the JSON schema cannot express, naming every problem at once. */
export function checkMethodFields(body: CreateServiceBody): void {
  const rules = METHOD_FIELDS[body.deploy_method];
  const errors: FieldError[] = [];
  for (const field of rules.required) {
    if (body[field] === undefined) {
      errors.push({
        path: `/body/${field}`,
        message: `is required when deploy_method is ${body.deploy_method}`,
      });
    }
  }
  for (const field of METHOD_SPECIFIC) {
    if (body[field] !== undefined && !rules.required.includes(field) && !rules.optional.includes(field)) {
      errors.push({
        path: `/body/${field}`,
        message: `is not accepted when deploy_method is ${body.deploy_method}`,
      });
    }
  }
  if (errors.length > 0) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
      errors,
    });
  }
}
