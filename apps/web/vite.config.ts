import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The API serves dist/ at / (apps/api/src/modules/dashboard). `pnpm --filter @hostctl/web dev`
// proxies /api to a running API so the session cookie and WebSockets stay same-origin.
const api = process.env.HOSTCTL_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  build: { target: 'es2022', sourcemap: false, reportCompressedSize: true },
  server: { proxy: { '/api': { target: api, ws: true, changeOrigin: false } } },
});
