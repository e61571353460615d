import { text } from 'node:stream/consumers';
import type { CliIo } from './cli.js';

/** The real process: environment, stdout/stderr lines, stdin. */
export function processIo(): CliIo {
  return {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    readStdin: () => text(process.stdin),
  };
}
