import { operands, UsageError } from '../args.js';
import type { CommandContext } from '../client/context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { secretsFrom } from './groups.commands.js';
import { parseVariables } from './services.commands.js';

// What `groups set|unset` and `services set|unset` share: both PATCH a resource whose variables
// are two maps, plain and secret (docs/secrets.md), where a value merges in and null removes one.

type Changes = Record<string, string | null>;
interface VariableChanges {
  variables?: Changes;
  secret_variables?: Changes;
}

/** Absent maps stay out of the body: the API tells "absent" from "empty". */
function changesOf(variables: Changes, secrets: Changes): VariableChanges {
  return {
    variables: Object.keys(variables).length > 0 ? variables : undefined,
    secret_variables: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
}

/** `--var K=V…`, `--secret K=V…` and `--secret-stdin K` as one change; none given is a usage error. */
export async function changesToSet(context: CommandContext): Promise<VariableChanges> {
  const variables = parseVariables(context.args.repeated.get('var') ?? []);
  const secrets = await secretsFrom(context);
  if (Object.keys(variables).length + Object.keys(secrets).length === 0)
    throw new UsageError('nothing to set: give --var NAME=VALUE, --secret NAME=VALUE or --secret-stdin NAME');
  return changesOf(variables, secrets);
}

/** `… unset RESOURCE NAME…`: the resource operand and at least one name. */
export function namesToUnset(context: CommandContext, resource: string): { ref: string; names: string[] } {
  const names = context.args.positional.slice(3);
  operands(context.args, 2, [resource, ...names.map(() => 'NAME')]);
  if (names.length === 0) throw new UsageError('missing NAME');
  return { ref: context.args.positional[2] ?? '', names };
}

/**
 * The removal of `names`, each sorted into the map that holds it in `current` (a read of the
 * resource): the API removes a name only from its own kind, so a plain null never drops a secret.
 * A name in neither map is a usage error naming it (exit 2), before anything is written.
 */
export function changesToUnset(
  names: readonly string[],
  current: { variables: object; secret_variables: object },
  owner: string,
): VariableChanges {
  const unknown = names.filter((name) => !(name in current.variables) && !(name in current.secret_variables));
  if (unknown.length > 0) throw new CliError(`${owner} has no variable ${unknown.join(', ')}`, EXIT.usage);
  const removed = (map: object) =>
    Object.fromEntries(names.filter((name) => name in map).map((name) => [name, null]));
  return changesOf(removed(current.variables), removed(current.secret_variables));
}
