import type { CustomerScope } from '@hostctl/auth-policy';
import { DomainError, LIMITS } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { VariableGroup } from '../generated/client.ts';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';
import type { Tx } from './release-rollback.js';
import { customerWhere } from './scope-where.js';
import { GROUP_VALUES, mergeGroups, type GroupEnvironment } from './group-environment.js';

/**
 * A customer's shared variables (docs/secrets.md#variable-groups). `variables` is sealed by the
 * client's vault extension like a service's; every read here goes through Prisma, so it is opened.
 * The list never selects `variables`, so it never decrypts: it reads the names from
 * `variable_names`, which every write here keeps beside them.
 */
export type VariableGroupRow = VariableGroup;
export type VariableGroupListRow = Omit<VariableGroup, 'variables' | 'variableNames'> & {
  /** Every name in `variables` (plain and secret), sorted. */
  variableNames: string[];
  /** Live services the group is attached to. */
  serviceCount: number;
};

export interface GroupContent {
  name?: string;
  variables: Record<string, string>;
  secretNames: Record<string, string>;
}

/** A service a group is attached to (live services only: a deleted one runs nothing). */
export interface AttachedService {
  id: string;
  name: string;
}

const LIST_COLUMNS = {
  id: true,
  customerId: true,
  name: true,
  secretNames: true,
  variableNames: true,
  version: true,
  createdAt: true,
  updatedAt: true,
  // One query with the page: a correlated count, not one request per row.
  _count: { select: { services: { where: { service: { deletedAt: null } } } } },
} as const;

/** The names a write stores beside the sealed values (`variable_names`). */
const namesOf = (variables: Record<string, string>): string[] => Object.keys(variables).sort();

function asNames(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((name) => typeof name === 'string') ? value : null;
}

/**
 * Replaces a service's attached groups, in order, in the caller's transaction. The caller checked
 * that every id is a group of the service's customer (`ownedIds`).
 */
export async function setServiceGroups(tx: Tx, serviceId: string, groupIds: readonly string[]) {
  await tx.serviceVariableGroup.deleteMany({ where: { serviceId } });
  if (groupIds.length > 0)
    await tx.serviceVariableGroup.createMany({
      data: groupIds.map((groupId, position) => ({ serviceId, groupId, position })),
    });
}

/** What an attach or a detach finds under the service's row lock (`checkAttachment`). */
export type AttachmentCheck = 'current' | 'list_moved' | 'group_changed' | 'group_gone';

/**
 * Run under the service's row lock (updateAndRedeploy's guard): the group's row is locked FOR SHARE,
 * so an edit or a delete of the group waits for this transaction, and its version must still be the
 * one the caller matched; the service's attached groups must still be the list the change was
 * computed from (a concurrent attach or detach moved it otherwise, and the caller computes again).
 */
export async function checkAttachment(
  tx: Tx,
  input: { serviceId: string; groupId: string; groupVersion: number; attached: readonly string[] },
): Promise<AttachmentCheck> {
  const [group] = await tx.$queryRaw<{ version: number }[]>`
    SELECT version FROM variable_groups WHERE id = ${input.groupId} FOR SHARE`;
  if (!group) return 'group_gone';
  if (group.version !== input.groupVersion) return 'group_changed';
  const rows = await tx.serviceVariableGroup.findMany({
    where: { serviceId: input.serviceId },
    orderBy: { position: 'asc' },
    select: { groupId: true },
  });
  return rows.map((row) => row.groupId).join() === input.attached.join() ? 'current' : 'list_moved';
}

export function createVariableGroupsStore(db: Db) {
  async function attachedServices(groupId: string): Promise<AttachedService[]> {
    const rows = await db.serviceVariableGroup.findMany({
      where: { groupId, service: { deletedAt: null } },
      select: { service: { select: { id: true, name: true } } },
      orderBy: { service: { name: 'asc' } },
    });
    return rows.map((row) => row.service);
  }

  /**
   * Rows written before `variable_names` existed: their names read once from the opened values (the
   * only list read that decrypts) and stored, unless the row changed meanwhile (its write set them).
   */
  async function namesOfLegacyRows(rows: readonly { id: string }[]): Promise<Map<string, string[]>> {
    if (rows.length === 0) return new Map();
    const opened = await db.variableGroup.findMany({
      where: { id: { in: rows.map((row) => row.id) } },
      select: { id: true, version: true, variables: true },
    });
    const filled = opened.map((row) => ({
      id: row.id,
      version: row.version,
      names: namesOf(row.variables as Record<string, string>),
    }));
    // Raw, so that `updated_at` stays the time of the last change a person made.
    await db.$executeRaw`
      UPDATE variable_groups AS g SET variable_names = v.names
      FROM jsonb_to_recordset(${JSON.stringify(filled)}::jsonb) AS v(id text, version int, names jsonb)
      WHERE g.id = v.id AND g.version = v.version AND g.variable_names IS NULL`;
    return new Map(filled.map((row) => [row.id, row.names]));
  }

  return {
    /**
     * Creates a group under the customer's cap (LIMITS.variableGroupsPerCustomer), counted under
     * a per-customer lock so concurrent creates cannot pass it. A taken name is a unique violation.
     */
    async create(customerId: string, content: Required<GroupContent>): Promise<VariableGroupListRow> {
      return db.$transaction(async (tx) => {
        await lockCountCap(tx, 'variableGroups', customerId);
        const count = await tx.variableGroup.count({ where: { customerId } });
        if (count >= LIMITS.variableGroupsPerCustomer)
          throw new DomainError(
            'conflict',
            `customer ${customerId} has ${count} variable groups, the most allowed (${LIMITS.variableGroupsPerCustomer})`,
          );
        const {
          variables: _opened,
          variableNames: _names,
          ...row
        } = await tx.variableGroup.create({
          data: { customerId, ...content, variableNames: namesOf(content.variables) },
        });
        return { ...row, variableNames: namesOf(content.variables), serviceCount: 0 };
      }, CAP_TRANSACTION);
    },

    async list(scope: CustomerScope, page: { page: number; perPage: number; customerId?: string }) {
      const tenant = customerWhere(scope);
      if (tenant === null) return { rows: [], total: 0 };
      const where = { ...(page.customerId ? { customerId: page.customerId } : {}), ...tenant };
      const [rows, total] = await Promise.all([
        db.variableGroup.findMany({
          where,
          select: LIST_COLUMNS,
          orderBy: [{ name: 'asc' }, { id: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.variableGroup.count({ where }),
      ]);
      const legacy = await namesOfLegacyRows(rows.filter((row) => asNames(row.variableNames) === null));
      return {
        rows: rows.map(({ _count, variableNames, ...row }) => ({
          ...row,
          variableNames: asNames(variableNames) ?? legacy.get(row.id) ?? [],
          serviceCount: _count.services,
        })),
        total,
      };
    },

    async findById(scope: CustomerScope, id: string): Promise<VariableGroupRow | null> {
      const tenant = customerWhere(scope);
      if (tenant === null) return null;
      return db.variableGroup.findFirst({ where: { id, ...tenant } });
    },

    /** The ids among `ids` that are groups of this customer (others are unknown to it). */
    async ownedIds(customerId: string, ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db.variableGroup.findMany({
        where: { customerId, id: { in: [...ids] } },
        select: { id: true },
      });
      return new Set(rows.map((row) => row.id));
    },

    /** These groups (ids of one customer, as `ownedIds` checked) merged in the order given. */
    async environmentOf(ids: readonly string[]): Promise<GroupEnvironment> {
      if (ids.length === 0) return mergeGroups([]);
      const rows = await db.variableGroup.findMany({ where: { id: { in: [...ids] } }, select: GROUP_VALUES });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return mergeGroups(ids.flatMap((id) => byId.get(id) ?? []));
    },

    /** A service's groups in attach order (ids). */
    async groupIdsOf(serviceId: string): Promise<string[]> {
      const rows = await db.serviceVariableGroup.findMany({
        where: { serviceId },
        orderBy: { position: 'asc' },
        select: { groupId: true },
      });
      return rows.map((row) => row.groupId);
    },

    attachedServices,

    /**
     * Writes new content and bumps the version, only if the version is still `expected` (an
     * If-Match, or the version the caller read): a concurrent edit that won makes this one a 412,
     * never a lost write. Returns the new row, or null when the version moved.
     */
    async update(id: string, expected: number, content: GroupContent): Promise<VariableGroupRow | null> {
      const done = await db.variableGroup.updateMany({
        where: { id, version: expected },
        data: { ...content, variableNames: namesOf(content.variables), version: { increment: 1 } },
      });
      if (done.count === 0) return null;
      return db.variableGroup.findUnique({ where: { id } });
    },

    /**
     * Deletes a group no live service uses; otherwise returns those services (the API answers 409
     * naming them). Attachments of deleted services go with it. Under the group's row lock, so an
     * attach racing the delete either lands first (and is named) or fails on the foreign key.
     */
    async remove(id: string): Promise<{ deleted: true } | { deleted: false; usedBy: AttachedService[] }> {
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM variable_groups WHERE id = ${id} FOR UPDATE`;
        const usedBy = await tx.serviceVariableGroup.findMany({
          where: { groupId: id, service: { deletedAt: null } },
          select: { service: { select: { id: true, name: true } } },
          orderBy: { service: { name: 'asc' } },
        });
        if (usedBy.length > 0) return { deleted: false as const, usedBy: usedBy.map((row) => row.service) };
        await tx.serviceVariableGroup.deleteMany({ where: { groupId: id } });
        await tx.variableGroup.delete({ where: { id } });
        return { deleted: true as const };
      });
    },
  };
}

export type VariableGroupsStore = ReturnType<typeof createVariableGroupsStore>;
