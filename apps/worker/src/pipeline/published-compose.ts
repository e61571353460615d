import { escapeComposeValue, renderCompose, type Plan } from '@hostctl/compose';
import { environmentOf, type WorkerService } from '@hostctl/db';
import { createRedactor } from './step-errors.js';

/**
 * The compose a git/ai service publishes (its `compose` field, and each release's copy): the
 * rendered plan, where interpolation put the variables' values. Those values are kept sealed
 * elsewhere (docs/secrets.md#what-is-encrypted), so none is written here in the clear:
 * - an environment entry that is exactly the variable of its name is written as `${NAME}`, as the
 *   tenant's compose (or the generated one of a Dockerfile repository) referred to it;
 * - any other variable value inside an environment value is masked (`***`);
 * - a secret's value is masked wherever it appears (a command, a label, a health check).
 * A plain value interpolated outside the environment (an image tag, a command) stays readable.
 */
export function publishedCompose(
  plan: Plan,
  service: Pick<WorkerService, 'variables' | 'secretNames' | 'groups'>,
): string {
  const environment = environmentOf(service);
  const maskAnyValue = createRedactor(environment);
  const text = renderCompose(plan, {
    environmentValue: (name, value) =>
      environment[name] === value ? `\${${name}}` : escapeComposeValue(maskAnyValue(value)),
  });
  return createRedactor(secretValues(service))(text);
}

/** The service's secret values and its groups' (docs/secrets.md#variable-groups), keyed apart. */
function secretValues(service: Pick<WorkerService, 'variables' | 'secretNames' | 'groups'>) {
  const own = Object.keys(service.secretNames).flatMap((name): [string, string][] => {
    const value = service.variables[name];
    return value === undefined ? [] : [[name, value]];
  });
  const grouped = service.groups.secretValues.map((value, index): [string, string] => [
    `group-secret:${index}`,
    value,
  ]);
  return Object.fromEntries([...own, ...grouped]);
}
