// The typed job catalog shared by the API (producer) and the worker (consumer).
// Payloads carry ids only: PostgreSQL holds the data, so a lost Redis loses no request.
export * from './catalog.js';
export * from './producer.js';
export * from './redis.js';
export * from './streams.js';
