import type { Db } from '../client.js';
import { isEnvelope } from './envelope.js';
import { PLATFORM_KEY_OWNER, type Vault } from './vault.js';

/**
 * The columns that hold secrets, sealed on every write through Prisma and opened on every read
 * (docs/secrets.md#what-is-encrypted): a service's variables, the variables a deployment
 * recorded for its release, the environment of each container in a deployment's plan (where
 * interpolation put the values), and the platform's TLS keys. Anything else in the plan stays
 * readable to SQL (health checks read `plan -> 'web'`).
 */
const SEALED: Record<string, Record<string, (value: unknown, seal: Seal) => Promise<unknown>>> = {
  Service: { variables: sealWhole },
  Deployment: { sourceVariables: sealWhole, plan: sealPlanEnvironment },
  // A customer's shared variables (docs/secrets.md#variable-groups): sealed like a service's.
  VariableGroup: { variables: sealWhole },
  // The platform's certificate key and ACME account key (PEM strings), sealed with its own data key.
  TlsCertificate: { privateKeyPem: sealText, accountKeyPem: sealText },
  // A customer's own backup bucket's keys (docs/backups.md#a-customers-own-target).
  CustomerBackupTarget: { credentials: sealWhole },
};

/** Models whose rows no customer owns: sealed with the platform's data key. */
const PLATFORM_OWNED = new Set(['TlsCertificate']);

type Seal = (value: unknown) => Promise<unknown>;

const WRITES = new Set([
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
]);

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

async function sealWhole(value: unknown, seal: Seal): Promise<unknown> {
  // Prisma's JsonNull/DbNull are class instances, not plain objects: they pass through.
  if (!isPlain(value) || isEnvelope(value)) return value;
  return seal(value);
}

async function sealText(value: unknown, seal: Seal): Promise<unknown> {
  return typeof value === 'string' ? seal(value) : value;
}

async function sealPlanEnvironment(plan: unknown, seal: Seal): Promise<unknown> {
  if (!isPlain(plan) || !Array.isArray(plan.containers)) return plan;
  const containers = await Promise.all(
    plan.containers.map(async (container: unknown) =>
      isPlain(container) && isPlain(container.environment) && !isEnvelope(container.environment)
        ? { ...container, environment: await seal(container.environment) }
        : container,
    ),
  );
  return { ...plan, containers };
}

/**
 * The customer whose data key seals a write: from the data when it names one, else from the row
 * the write targets (looked up once per row and cached: a row never changes customer).
 */
function createCustomerResolver(base: Db) {
  const ofService = new Map<string, string>();
  const ofDeployment = new Map<string, string>();
  const ofGroup = new Map<string, string>();
  async function groupCustomer(groupId: string): Promise<string> {
    const known = ofGroup.get(groupId);
    if (known) return known;
    const row = await base.variableGroup.findUnique({ where: { id: groupId }, select: { customerId: true } });
    if (!row) throw new Error(`cannot seal variables: variable group ${groupId} is not committed`);
    ofGroup.set(groupId, row.customerId);
    return row.customerId;
  }
  async function serviceCustomer(serviceId: string): Promise<string> {
    const known = ofService.get(serviceId);
    if (known) return known;
    const row = await base.service.findUnique({ where: { id: serviceId }, select: { customerId: true } });
    if (!row) throw new Error(`cannot seal variables: service ${serviceId} is not committed`);
    ofService.set(serviceId, row.customerId);
    return row.customerId;
  }
  async function deploymentCustomer(deploymentId: string): Promise<string> {
    const known = ofDeployment.get(deploymentId);
    if (known) return known;
    const row = await base.deployment.findUnique({
      where: { id: deploymentId },
      select: { serviceId: true },
    });
    if (!row) throw new Error(`cannot seal variables: deployment ${deploymentId} is not committed`);
    const customerId = await serviceCustomer(row.serviceId);
    ofDeployment.set(deploymentId, customerId);
    return customerId;
  }
  return async (model: string, data: Record<string, unknown>, where: unknown): Promise<string> => {
    const whereId = isPlain(where) && typeof where.id === 'string' ? where.id : undefined;
    const connected = (relation: unknown) =>
      isPlain(relation) && isPlain(relation.connect) && typeof relation.connect.id === 'string'
        ? relation.connect.id
        : undefined;
    if (model === 'CustomerBackupTarget') {
      // Keyed by the customer: an upsert names it in `where`, a create in its data.
      const owner = typeof data.customerId === 'string' ? data.customerId : connected(data.customer);
      if (owner) return owner;
      if (isPlain(where) && typeof where.customerId === 'string') return where.customerId;
    } else if (model === 'Service' || model === 'VariableGroup') {
      const direct = typeof data.customerId === 'string' ? data.customerId : connected(data.customer);
      if (direct) return direct;
      if (whereId) return model === 'Service' ? serviceCustomer(whereId) : groupCustomer(whereId);
    } else {
      const serviceId = typeof data.serviceId === 'string' ? data.serviceId : connected(data.service);
      if (serviceId) return serviceCustomer(serviceId);
      if (whereId) return deploymentCustomer(whereId);
    }
    // Refuse rather than write plaintext: a write the resolver cannot place is a bug to fix here.
    throw new Error(`cannot seal ${model} columns: the write names neither its row id nor its owner`);
  };
}

/**
 * The client every process uses: sealed columns are encrypted on the way in and every envelope in
 * a result is opened on the way out, so stores and callers only ever see plain values.
 */
export function withSealedColumns(base: Db, vault: Vault): Db {
  const customerOf = createCustomerResolver(base);

  async function sealData(model: string, data: unknown, where: unknown): Promise<unknown> {
    const columns = SEALED[model];
    if (!columns || !isPlain(data)) return data;
    const present = Object.keys(columns).filter((column) => data[column] !== undefined);
    if (present.length === 0) return data;
    const customerId = PLATFORM_OWNED.has(model) ? PLATFORM_KEY_OWNER : await customerOf(model, data, where);
    const sealed = { ...data };
    for (const column of present) {
      const sealColumn = columns[column];
      if (sealColumn)
        sealed[column] = await sealColumn(data[column], (value) => vault.seal(customerId, value));
    }
    return sealed;
  }

  async function sealArgs(model: string, operation: string, args: Record<string, unknown>) {
    if (operation === 'upsert')
      return {
        ...args,
        create: await sealData(model, args.create, args.where),
        update: await sealData(model, args.update, args.where),
      };
    if (Array.isArray(args.data))
      return { ...args, data: await Promise.all(args.data.map((row) => sealData(model, row, args.where))) };
    return { ...args, data: await sealData(model, args.data, args.where) };
  }

  const extended = base.$extends({
    query: {
      $allModels: {
        async $allOperations({ model, operation, args, query }) {
          const sealed =
            WRITES.has(operation) && SEALED[model] && isPlain(args)
              ? await sealArgs(model, operation, args)
              : args;
          return vault.openAll(await query(sealed as typeof args));
        },
      },
    },
  });
  // A query-only extension keeps every model method's signature: the stores keep their `Db` type.
  return extended as unknown as Db;
}
