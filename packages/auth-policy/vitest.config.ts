import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { name: 'auth-policy', include: ['src/**/*.test.ts'] } });
