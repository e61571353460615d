// Which git repositories, branches and images the platform may fetch or run: pure checks of URLs, ref
// names and image references, and an address check (DNS resolved, loopback/private targets refused) against SSRF.
export * from './policy-result.js';
export * from './git-url.policy.js';
export * from './notification-url.policy.js';
export * from './backup-endpoint.policy.js';
export * from './branch.policy.js';
export * from './allowed-hosts.js';
export * from './ip-ranges.js';
export * from './host.policy.js';
export * from './protected-endpoints.js';
export * from './image-reference.js';
export * from './image.policy.js';
export * from './policy-config.js';
