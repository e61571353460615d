// The template catalog: compose documents with declared variables, loaded from templates/*.yaml.
// Resolving a template turns user variables into the full set a deploy needs (defaults, secrets).
export * from './catalog.js';
export * from './resolve.js';
export * from './platform-images.js';
