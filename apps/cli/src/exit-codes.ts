/**
 * Exit codes are the CLI's contract with CI pipelines (docs/ci.md): a script branches on them, so
 * each one means one thing and they never change meaning.
 */
export const EXIT = {
  ok: 0,
  /** The deployment failed, or the request did (API error, network error). */
  failed: 1,
  /** Bad arguments, missing or unsafe configuration, or a service that does not resolve. */
  usage: 2,
  /** --wait ran out of time; the deployment goes on. */
  timedOut: 3,
  /** The deployment was cancelled, superseded by a newer one, or rolled back. */
  notApplied: 4,
  /** 401 or 403: the token is missing, invalid, revoked, expired or lacks the permission. */
  auth: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of a final deployment status; an unknown final status is a failure, never success. */
export function exitCodeForStatus(status: string): ExitCode {
  switch (status) {
    case 'succeeded':
      return EXIT.ok;
    case 'cancelled':
    case 'superseded':
    case 'rolled_back':
      return EXIT.notApplied;
    default:
      return EXIT.failed;
  }
}

/** An error that ends the command with a given exit code; its message is printed as is. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}
