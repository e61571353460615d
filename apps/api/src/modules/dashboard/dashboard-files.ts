import { gzipSync } from 'node:zlib';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the built dashboard, held in memory with its gzip form (the whole build is ~100s of KB). */
export interface DashboardFile {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  /** Vite's hashed output under assets/: its content never changes under that name. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** apps/web/dist of this checkout, found from this file's place in the source tree. */
export function defaultDashboardDir(): string {
  return fileURLToPath(new URL('../../../../web/dist', import.meta.url));
}

/**
 * The built files by URL path ("/index.html", "/assets/index-3fa2.js"). Only files listed here are
 * ever served, so no request path can reach outside the build folder. Null when there is no build
 * (no index.html): the caller answers that the dashboard is not built.
 */
export async function loadDashboardFiles(dir: string): Promise<Map<string, DashboardFile> | null> {
  const index = await stat(path.join(dir, 'index.html')).catch(() => null);
  if (!index?.isFile()) return null;
  const files = new Map<string, DashboardFile>();
  for (const relative of await listFiles(dir)) {
    const extension = path.extname(relative);
    const type = TYPES[extension];
    if (type === undefined) continue;
    const body = await readFile(path.join(dir, relative));
    const urlPath = `/${relative.split(path.sep).join('/')}`;
    files.set(urlPath, {
      body,
      gzip: COMPRESSIBLE.has(extension) && body.length > 1024 ? gzipSync(body) : null,
      type,
      immutable: urlPath.startsWith('/assets/'),
    });
  }
  return files;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}
