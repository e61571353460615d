#!/usr/bin/env node
// hostctl: the API client CI pipelines and people use (services, deploy --wait, logs…) and the
// operator's bootstrap commands (customers, users, API keys). `hostctl --help`; docs/ci.md.
import { text } from 'node:stream/consumers';
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin: () => text(process.stdin),
});
