import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { name: 'templates', isolate: false, include: ['src/**/*.test.ts'] } });
