import { parseArgs, UsageError, type ParsedArgs } from './args.js';
import { createApiClient, type ApiClient } from './client/api-client.js';
import { loadClientConfig, type ClientConfig } from './client/client-config.js';
import type { ClientCommand, CommandContext } from './client/context.js';
import {
  createBackup,
  getBackup,
  verifyBackup,
  listBackups,
  restoreBackup,
} from './commands/backups.commands.js';
import { backupSchedule, removeBackupSchedule } from './commands/backup-schedule.commands.js';
import { backupTarget } from './commands/backup-target.commands.js';
import { cancel, deploy, listDeployments, rollback } from './commands/deploy.commands.js';
import {
  attachGroup,
  detachGroup,
  setGroupVariables,
  unsetGroupVariables,
} from './commands/group-edits.commands.js';
import {
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  redeployGroup,
  revealGroupSecret,
} from './commands/groups.commands.js';
import { run } from './commands/run.commands.js';
import { exec } from './commands/exec.commands.js';
import {
  revealServiceSecret,
  setServiceVariables,
  unsetServiceVariables,
} from './commands/service-variables.commands.js';
import { getRun, listRuns } from './commands/runs.commands.js';
import { listScheduleRuns, runSchedule } from './commands/schedule-runs.commands.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  updateSchedule,
} from './commands/schedules.commands.js';
import { login, logout } from './commands/login.commands.js';
import { events, logs } from './commands/logs.commands.js';
import {
  createService,
  deleteService,
  getService,
  listServices,
  restartService,
  startService,
  stopService,
} from './commands/services.commands.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { printable } from './printable.js';
import type * as Operator from './operator.js';
import { USAGE } from './usage.js';

/** Commands by their words; two-word commands first so `services list` wins over `services`. */
const CLIENT_COMMANDS: Record<string, ClientCommand> = {
  'services list': listServices,
  'services get': getService,
  'services create': createService,
  'services delete': deleteService,
  'services start': startService,
  'services stop': stopService,
  'services restart': restartService,
  'services set': setServiceVariables,
  'services unset': unsetServiceVariables,
  'services reveal': revealServiceSecret,
  'groups list': listGroups,
  'groups get': getGroup,
  'groups create': createGroup,
  'groups set': setGroupVariables,
  'groups unset': unsetGroupVariables,
  'groups delete': deleteGroup,
  'groups attach': attachGroup,
  'groups detach': detachGroup,
  'groups reveal': revealGroupSecret,
  'groups redeploy': redeployGroup,
  'runs get': getRun,
  'runs list': listRuns,
  'schedules list': listSchedules,
  'schedules get': getSchedule,
  'schedules create': createSchedule,
  'schedules update': updateSchedule,
  'schedules delete': deleteSchedule,
  'schedules run': runSchedule,
  'schedules runs': listScheduleRuns,
  'backups create': createBackup,
  'backups list': listBackups,
  'backups get': getBackup,
  'backups verify': verifyBackup,
  'backups schedule': backupSchedule,
  'backups unschedule': removeBackupSchedule,
  'backups target': backupTarget,
  restore: restoreBackup,
  deploy,
  rollback,
  cancel,
  deployments: listDeployments,
  logs,
  events,
  run,
  exec,
  login,
  logout,
};

const OPERATOR_COMMAND_NAMES = new Set([
  'customers create',
  'users create',
  'api-keys create',
  'secrets rotate',
  'secrets seal',
  'secrets verify',
]);

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  readStdin: () => Promise<string>;
  /** Node's fetch unless a test answers instead. */
  fetchImpl?: typeof fetch;
  /**
   * The operator bootstrap commands, loaded only when one runs: they need Prisma, which the API
   * commands do not, and the CLI image's entry (client-main.ts) leaves them out altogether.
   */
  loadOperator?: () => Promise<typeof Operator>;
}

export const USER_AGENT = 'hostctl-cli/0.1';

/**
 * Runs one command and returns its exit code; every error becomes a message on stderr and the
 * code of docs/ci.md. Nothing here prints the token: errors carry the API's problem title and
 * detail, and URLs never contain it.
 */
export async function runCli(argv: string[], rawIo: CliIo): Promise<number> {
  // Every line out, whoever wrote it, without terminal control characters (printable.ts).
  const io: CliIo = {
    ...rawIo,
    out: (text) => rawIo.out(printable(text)),
    err: (text) => rawIo.err(printable(text)),
  };
  try {
    const args = parseArgs(argv);
    const words = args.positional.slice(0, 2).join(' ');
    if (OPERATOR_COMMAND_NAMES.has(words)) {
      if (!io.loadOperator)
        throw new CliError(
          'the operator commands are not in this build (they need the database): run them from the api image or the repository',
          EXIT.usage,
        );
      const operator = await io.loadOperator();
      const command = operator.OPERATOR_COMMANDS[words];
      if (command) return await operator.runOperatorCommand(command, args, io);
      const secrets = operator.SECRETS_COMMANDS[words];
      if (secrets) return await operator.runSecretsCommand(secrets, args, io);
    }
    const command = CLIENT_COMMANDS[words] ?? CLIENT_COMMANDS[args.positional[0] ?? ''];
    if (args.flags.get('help') === true || !command) {
      if (command || args.positional.length === 0) {
        io.out(USAGE);
        return args.positional.length === 0 && args.flags.get('help') !== true ? EXIT.usage : EXIT.ok;
      }
      throw new UsageError(`unknown command ${JSON.stringify(args.positional.join(' '))}`);
    }
    return await command(contextFor(args, io));
  } catch (error) {
    return report(error, io);
  }
}

function contextFor(args: ParsedArgs, io: CliIo): CommandContext {
  const clientFor = (config: ClientConfig): ApiClient =>
    createApiClient({
      baseUrl: config.url,
      token: config.token,
      userAgent: USER_AGENT,
      ...(io.fetchImpl ? { fetchImpl: io.fetchImpl } : {}),
    });
  let client: ApiClient | undefined;
  return {
    args,
    json: args.flags.get('json') === true,
    env: io.env,
    client: () =>
      (client ??= clientFor(
        loadClientConfig(io.env, { allowInsecure: args.flags.get('insecure') === true }),
      )),
    clientFor,
    out: io.out,
    err: io.err,
    readStdin: io.readStdin,
  };
}

function report(error: unknown, io: CliIo): ExitCode {
  if (error instanceof UsageError) {
    io.err(`hostctl: ${error.message}\n(hostctl --help lists the commands)`);
    return EXIT.usage;
  }
  if (error instanceof CliError) {
    io.err(`hostctl: ${error.message}`);
    return error.exitCode;
  }
  io.err(`hostctl: ${(error as Error).message}`);
  return EXIT.failed;
}
