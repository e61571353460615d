// Who may do what: roles, permissions and customer scope as pure functions.
// Every API route declares one Permission; services pass the principal's scope into every query.
export * from './principal.js';
export * from './permissions.js';
export * from './scope.js';
export * from './api-key.js';
export * from './cookie-keys.js';
export * from './user-admin.js';
export * from './key-limits.js';
