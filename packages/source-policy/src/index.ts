// Which git repositories and branches the platform may fetch: pure checks of URLs and ref names, and
// an address check (DNS resolved, loopback/private targets refused) that guards the worker against SSRF.
export * from './policy-result.js';
export * from './git-url.policy.js';
export * from './branch.policy.js';
export * from './allowed-hosts.js';
export * from './ip-ranges.js';
export * from './host.policy.js';
