#!/usr/bin/env node
// hostctl: the API client CI pipelines and people use (services, deploy --wait, logs…) and the
// operator's commands straight against PostgreSQL (customers, users, API keys, secrets keys).
// `hostctl --help`; docs/ci.md.
import { runCli } from './cli.js';
import { processIo } from './process-io.js';

process.exitCode = await runCli(process.argv.slice(2), {
  ...processIo(),
  loadOperator: () => import('./operator.js'),
});
