import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { name: 'auth-policy', isolate: false, include: ['src/**/*.test.ts'] } });
