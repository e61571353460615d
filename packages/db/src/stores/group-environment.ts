import type { Db } from '../client.js';
import type { Tx } from './release-rollback.js';

/** A group version a release ran with (deployments.source_variable_groups). */
// A type literal, not an interface: it is stored as JSON, which needs an index-compatible shape.
export type GroupVersion = { group_id: string; version: number };

/** A deployment row's recorded group versions (null: recorded none, an older row). */
export function groupVersionsOf(value: unknown): GroupVersion[] | null {
  return Array.isArray(value) ? (value as GroupVersion[]) : null;
}

/**
 * What a service's attached groups give its environment (docs/secrets.md#variable-groups): their
 * variables merged in attach order (a later group's value wins), the values of their secret
 * variables (masked wherever the service's secrets are), and the versions a release records.
 */
export interface GroupEnvironment {
  variables: Record<string, string>;
  secretValues: string[];
  versions: GroupVersion[];
}

export const NO_GROUPS: GroupEnvironment = { variables: {}, secretValues: [], versions: [] };

/**
 * The one precedence rule: the service's own value over any group's, a later group's over an
 * earlier one's (`readGroupEnvironment` merged those already).
 */
export function environmentOf(service: {
  variables: Record<string, string>;
  groups: GroupEnvironment;
}): Record<string, string> {
  return { ...service.groups.variables, ...service.variables };
}

/** Reads and merges a service's groups; the client's vault opened their sealed variables. */
export async function readGroupEnvironment(db: Db, serviceId: string): Promise<GroupEnvironment> {
  const rows = await db.serviceVariableGroup.findMany({
    where: { serviceId },
    orderBy: { position: 'asc' },
    select: { group: { select: GROUP_VALUES } },
  });
  return mergeGroups(rows.map((row) => row.group));
}

export const GROUP_VALUES = { id: true, version: true, variables: true, secretNames: true } as const;

/** Groups in attach order, merged (a later group's value over an earlier one's). */
export function mergeGroups(
  groups: readonly { id: string; version: number; variables: unknown; secretNames: unknown }[],
): GroupEnvironment {
  const variables: Record<string, string> = {};
  const secretValues: string[] = [];
  for (const group of groups) {
    const values = stringMap(group.variables);
    Object.assign(variables, values);
    for (const name of Object.keys(stringMap(group.secretNames))) {
      const value = values[name];
      // Masked even where a later group or the service overrides it: masking more hides nothing wrong.
      if (value !== undefined) secretValues.push(value);
    }
  }
  return {
    variables,
    secretValues,
    versions: groups.map((group) => ({ group_id: group.id, version: group.version })),
  };
}

/** How a changed group is named in a rollback refusal's `changed` list (a variable name cannot contain ':'). */
export const GROUP_CHANGE = 'group:';

/**
 * The groups whose version (or presence, or order) differs between the service's attachments now
 * and what a release ran (docs/secrets.md#rollback-and-groups): a rollback runs the release's plan,
 * whose environment holds the values of the versions it recorded, so without `manage` it may
 * not go back to other group values. Null (a release from before groups): nothing recorded, no change.
 */
export async function changedGroups(tx: Tx, serviceId: string, recorded: unknown): Promise<string[]> {
  if (!Array.isArray(recorded)) return [];
  const ran = recorded as GroupVersion[];
  const rows = await tx.serviceVariableGroup.findMany({
    where: { serviceId },
    orderBy: { position: 'asc' },
    select: { group: { select: { id: true, version: true } } },
  });
  const now = rows.map(({ group }) => ({ group_id: group.id, version: group.version }));
  const changed = new Set<string>();
  for (let index = 0; index < Math.max(ran.length, now.length); index += 1) {
    const before = ran[index];
    const after = now[index];
    if (before?.group_id === after?.group_id && before?.version === after?.version) continue;
    if (before) changed.add(before.group_id);
    if (after) changed.add(after.group_id);
  }
  return [...changed].sort().map((id) => `${GROUP_CHANGE}${id}`);
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
