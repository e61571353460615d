import { credentialHoldsExplicitly, customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError, validationError } from '@hostctl/domain';
import type { ExecSessionsStore, RunsStore, ServicesStore } from '@hostctl/db';
import { checkCommand, componentsOf } from '../runs/runs.service.js';
import type { ExecSlot } from './exec-bounds.js';
import type { createExecBounds } from './exec-bounds.js';

/** The command of a terminal opened without one. */
const DEFAULT_EXEC_COMMAND = ['/bin/sh'];

/** What the handshake decided: where the terminal goes and the slot it holds. */
export interface ExecTarget {
  serviceId: string;
  customerId: string;
  component: string;
  command: string[];
  slot?: ExecSlot;
}

export type ExecService = ReturnType<typeof createExecService>;

/**
 * Terminals into running services (docs/jobs.md#terminal). Decides at the handshake who may open
 * one and where (a service another customer owns is a 404, as everywhere), records the session in
 * PostgreSQL and hands it to a worker, which holds the exec on the engine.
 */
export function createExecService(deps: {
  services: Pick<ServicesStore, 'findById'>;
  runs: Pick<RunsStore, 'currentRelease'>;
  sessions: Pick<ExecSessionsStore, 'create' | 'close'>;
  bounds: ReturnType<typeof createExecBounds>;
  enqueueExec: (execSessionId: string) => Promise<void>;
}) {
  /** The credential may open a terminal: a session by its role, an API key only with `exec` by name. */
  function checkCredential(principal: Principal): void {
    if (!credentialHoldsExplicitly(principal, 'exec'))
      throw new DomainError(
        'forbidden',
        'an API key opens a terminal only when its limits name the exec action (hostctl api-keys create --actions exec)',
      );
  }

  async function visibleOr404(principal: Principal, serviceId: string): Promise<{ customerId: string }> {
    checkCredential(principal);
    const service = await deps.services.findById(customerScope(principal), serviceId);
    if (!service) throw new DomainError('not_found', `service ${serviceId} not found`);
    return { customerId: service.customerId };
  }

  return {
    visibleOr404,

    /** The handshake's checks, in the order a plain request would meet them; claims a slot for an upgrade. */
    async prepare(
      principal: Principal,
      serviceId: string,
      query: { component?: string; cmd?: string | string[] },
      upgrade: boolean,
    ): Promise<ExecTarget> {
      const { customerId } = await visibleOr404(principal, serviceId);
      const command = query.cmd === undefined ? DEFAULT_EXEC_COMMAND : [query.cmd].flat();
      checkCommand(command, '/querystring/cmd');
      const release = await deps.runs.currentRelease(serviceId);
      const components = componentsOf(release?.plan);
      if (components.length === 0)
        throw new DomainError(
          'conflict',
          `service ${serviceId} has no release running yet; nothing to open a terminal in`,
        );
      const component = query.component ?? webComponentOf(release?.plan) ?? components[0]!;
      if (!components.includes(component))
        throw validationError(
          '/querystring/component',
          `no component named ${JSON.stringify(component)} in the current release (${components.join(', ')})`,
        );
      const target: ExecTarget = { serviceId, customerId, component, command };
      if (upgrade) target.slot = await deps.bounds.claim(crypto.randomUUID(), serviceId, customerId);
      return target;
    },

    /** Records the session and hands it to a worker; the caller keeps the slot until the socket closes. */
    async start(principal: Principal, target: ExecTarget): Promise<{ id: string }> {
      const session = await deps.sessions.create({
        serviceId: target.serviceId,
        customerId: target.customerId,
        component: target.component,
        command: target.command,
        userId: principal.userId,
        apiKeyId: principal.apiKeyId ?? null,
      });
      try {
        await deps.enqueueExec(session.id);
      } catch (error) {
        await deps.sessions.close(session.id, { exitCode: null, error: 'the job queue was unavailable' });
        throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
          cause: error,
        });
      }
      return { id: session.id };
    },
  };
}

function webComponentOf(plan: unknown): string | undefined {
  const web = (plan as { web?: { container?: unknown } } | null)?.web?.container;
  return typeof web === 'string' ? web : undefined;
}
