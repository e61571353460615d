import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../test-support/harness.js';

// The dashboard as a browser gets it from the API: a small stand-in build (the real one is built
// by Vite; what matters here is how the API serves whatever is in the folder).
const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

let dist: string;
let h: Harness;
let empty: Harness;

beforeAll(async () => {
  dist = await mkdtemp(path.join(tmpdir(), 'hostctl-dashboard-'));
  await mkdir(path.join(dist, 'assets'));
  await writeFile(path.join(dist, 'index.html'), INDEX);
  await writeFile(path.join(dist, 'assets/index-abc123.js'), SCRIPT);
  await writeFile(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(path.join(dist, 'notes.secret'), 'not a servable type');
  h = await createHarness({ DASHBOARD_DIR: dist, PUBLIC_URL: 'https://panel.example.test' });
  empty = await createHarness();
});
afterAll(async () => {
  await Promise.all([h?.close(), empty?.close()]);
  await rm(dist, { recursive: true, force: true });
});

describe('the dashboard at /', () => {
  it('serves index.html revalidated on every load, under a strict CSP', async () => {
    const response = await h.app.inject({ url: '/', headers: HTML });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toBe(INDEX);
    expect(response.headers['cache-control']).toBe('no-cache');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("connect-src 'self' wss://panel.example.test");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets as immutable, gzipped for clients that accept it', async () => {
    const plain = await h.app.inject({ url: '/assets/index-abc123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(SCRIPT);
    const gzipped = await h.app.inject({
      url: '/assets/index-abc123.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.rawPayload).toString()).toBe(SCRIPT);
    expect(gzipped.rawPayload.length).toBeLessThan(SCRIPT.length / 4);
  });

  it('serves the page at / to any client (curl included)', async () => {
    const response = await h.app.inject({ url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(INDEX);
  });

  it('answers a browser navigation to any dashboard address with index.html (deep links)', async () => {
    for (const url of ['/services', '/services/abc/logs?tail=10', '/api-keys']) {
      const response = await h.app.inject({ url, headers: HTML });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toBe(INDEX);
    }
  });

  it('never answers API, hook or probe paths, missing assets or non-browser requests with the page', async () => {
    for (const url of ['/api/nope', '/api', '/hooks/x', '/metrics/x', '/livez/x', '/assets/gone-123.js']) {
      const response = await h.app.inject({ url, headers: HTML });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type'], url).toContain('application/problem+json');
    }
    const script = await h.app.inject({ url: '/services', headers: { accept: 'application/json' } });
    expect(script.statusCode).toBe(404);
    // Real API routes are untouched.
    expect((await h.app.inject({ url: '/livez' })).statusCode).toBe(200);
    expect((await h.app.inject({ url: '/api/services' })).statusCode).toBe(401);
  });

  it('serves only the built files of known types: no way out of the folder', async () => {
    for (const url of [
      '/notes.secret',
      '/../package.json',
      '/assets/../../package.json',
      '/%2e%2e/etc/passwd',
    ]) {
      const response = await h.app.inject({ url, headers: { accept: '*/*' } });
      expect(response.statusCode, url).not.toBe(200);
    }
    expect((await h.app.inject({ url: '/favicon.svg' })).headers['content-type']).toBe('image/svg+xml');
  });

  it('starts without a build and says so, as a page for browsers and a problem otherwise', async () => {
    const page = await empty.app.inject({ url: '/', headers: HTML });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('The dashboard is not built');
    const problem = await empty.app.inject({ url: '/' });
    expect(problem.statusCode).toBe(503);
    expect(problem.json()).toMatchObject({ code: 'dependency_unavailable' });
    expect(problem.json<{ detail: string }>().detail).toContain('pnpm --filter @hostctl/web build');
    expect((await empty.app.inject({ url: '/livez' })).statusCode).toBe(200);
  });
});
