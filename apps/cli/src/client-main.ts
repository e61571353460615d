#!/usr/bin/env node
// Entry of the CLI container image (docker/cli.Dockerfile): the API client only. The operator
// bootstrap commands are left out so the image carries no database client.
import { runCli } from './cli.js';
import { processIo } from './process-io.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
