import type { EventEmitter } from 'node:events';

/**
 * Last line of defence: an error nobody handled (an 'error' event without a listener somewhere in a
 * dependency, a promise nobody awaited) is logged and the process keeps serving. One tenant's bad
 * input must never stop every other tenant's work; the failing job or request fails on its own
 * (its timeout bounds it), and the log line says where the handler is missing. The root causes are
 * fixed where found (docs/security/image-policy.md); this only keeps an unknown one from being fatal.
 */
export interface GuardLogger {
  error(details: Record<string, unknown>, message: string): void;
}

export function installProcessGuard(logger: GuardLogger, proc: EventEmitter = process): void {
  proc.on('uncaughtException', (error: unknown) => {
    logger.error({ err: describe(error) }, 'uncaught exception (process kept running)');
  });
  proc.on('unhandledRejection', (reason: unknown) => {
    logger.error({ err: describe(reason) }, 'unhandled promise rejection (process kept running)');
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}
