import type { ParsedArgs } from '../args.js';
import type { ApiClient } from './api-client.js';
import type { ClientConfig } from './client-config.js';
import type { TerminalIo } from '../commands/exec-session.js';

/**
 * What an API command gets: its arguments, a client made on first use (so `login` and `--help`
 * need no token), and the two output streams. Results go to stdout (one JSON document with
 * --json); progress, logs and errors to stderr, so `hostctl … --json | jq` always parses.
 */
export interface CommandContext {
  args: ParsedArgs;
  json: boolean;
  env: Record<string, string | undefined>;
  client(): ApiClient;
  /** A client for an explicit URL and token (`login` checks them before storing). */
  clientFor(config: ClientConfig): ApiClient;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Reads all of standard input (compose files, `login --token-stdin`). */
  readStdin: () => Promise<string>;
  /** `exec`'s raw stdin and stdout (the process's when absent). */
  terminal?: TerminalIo;
}

/** An exit code of docs/ci.md, or (`run`) the exit code of the command that ran. */
export type ClientCommand = (context: CommandContext) => Promise<number>;

/** Aligned columns for people; scripts use --json. */
export function formatTable(rows: Record<string, unknown>[], columns: readonly string[]): string {
  const cells = rows.map((row) => columns.map((column) => cellText(row[column])));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => (line[i] ?? '').length)),
  );
  const render = (line: string[]) =>
    line
      .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [render(columns.map((column) => column.toUpperCase())), ...cells.map(render)].join('\n');
}

/** A value as one cell or line: strings as they are, everything else as JSON, absent as '-'. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** An argv as one line, each argument quoted when a reader could not tell where it ends. */
export function commandText(command: readonly string[]): string {
  return command.map((arg) => (arg === '' || /[\s"'\\]/.test(arg) ? JSON.stringify(arg) : arg)).join(' ');
}

export function printJson(context: CommandContext, value: unknown): void {
  context.out(JSON.stringify(value, null, 2));
}
