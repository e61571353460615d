import { execFile } from 'node:child_process';

/**
 * Runs iptables (Debian's, nf_tables backend, the same one Docker uses) with argument arrays: no
 * shell ever sees a rule. `-w` waits for the xtables lock Docker holds while it edits its chains.
 * On the worker's machine by default; on another swarm node with a node command as the runner.
 */
export interface Iptables {
  /** Exit code 0 → true, 1 (rule or chain not found) → false; anything else rejects. */
  check(args: string[]): Promise<boolean>;
  run(args: string[]): Promise<string>;
  /** `iptables-restore --noflush`: replaces the chains the input declares, atomically, leaves the rest. */
  restore(input: string): Promise<void>;
}

export class IptablesError extends Error {
  constructor(
    message: string,
    readonly code: string | number | undefined,
  ) {
    super(message);
    this.name = 'IptablesError';
  }
}

/** Runs a program with an argv (and stdin): a child process here, or a node command (node-command.ts). */
export type ProgramRunner = (
  argv: string[],
  input?: string,
) => Promise<{ code: number; stdout: string; stderr: string }>;

/** A child process of the worker, on the worker's own machine. */
const runLocally: ProgramRunner = ([file = '', ...args], input) =>
  new Promise((resolve, reject) => {
    const child = execFile(file, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (!error) return resolve({ code: 0, stdout, stderr });
      const code = (error as NodeJS.ErrnoException).code;
      // A missing binary or a timeout is not an answer about the rule set.
      if (typeof code !== 'number') return reject(new IptablesError(`${file}: ${error.message}`, code));
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });

export function createIptables(
  options: { binary?: string; restoreBinary?: string; runner?: ProgramRunner } = {},
): Iptables {
  const binary = options.binary ?? 'iptables';
  const restoreBinary = options.restoreBinary ?? 'iptables-restore';
  const runner = options.runner ?? runLocally;
  const exec = (file: string, args: string[], input?: string) => runner([file, ...args], input);
  const fail = (file: string, args: string[], result: { code: number; stderr: string }) =>
    new IptablesError(
      `${file} ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`,
      result.code,
    );

  return {
    async check(args) {
      const result = await exec(binary, ['-w', ...args]);
      if (result.code === 0) return true;
      if (result.code === 1 && !/permission denied|not permitted/i.test(result.stderr)) return false;
      throw fail(binary, args, result);
    },
    async run(args) {
      const result = await exec(binary, ['-w', ...args]);
      if (result.code !== 0) throw fail(binary, args, result);
      return result.stdout;
    },
    async restore(input) {
      const args = ['-w', '--noflush'];
      const result = await exec(restoreBinary, args, input);
      if (result.code !== 0) throw fail(restoreBinary, args, result);
    },
  };
}
