import { renderCompose, type Plan } from '@hostctl/compose';
import type { WorkerService } from '@hostctl/db';
import { createRedactor } from './step-errors.js';

/**
 * The compose a git/ai service publishes (its `compose` field): the rendered plan, with every
 * secret variable's value masked, since interpolation put the values into the environment.
 */
export function publishedCompose(
  plan: Plan,
  service: Pick<WorkerService, 'variables' | 'secretNames' | 'groups'>,
): string {
  const own = Object.keys(service.secretNames).flatMap((name): [string, string][] => {
    const value = service.variables[name];
    return value === undefined ? [] : [[name, value]];
  });
  // The groups' secret values too (docs/secrets.md#variable-groups), keyed apart from names.
  const grouped = service.groups.secretValues.map((value, index): [string, string] => [
    `group-secret:${index}`,
    value,
  ]);
  const secrets = Object.fromEntries([...own, ...grouped]);
  return createRedactor(secrets)(renderCompose(plan));
}
