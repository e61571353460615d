// Helpers shared by the test suites of several workspaces (never imported by app code).
export * from './free-port.js';
export * from './api-client.js';
export * from './hostile-yaml.js';
export * from './chromium.js';
export * from './git-server.js';
export * from './dashboard-build.js';
export * from './app-bundles.js';
export * from './docker-objects.js';
export * from './pebble.js';
export * from './redis-dump.js';
