#!/usr/bin/env node
// The package's `hostctl` bin inside the workspace: runs the TypeScript sources through tsx. The
// container image (docker/cli.Dockerfile) runs the esbuild bundle instead and needs neither.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
