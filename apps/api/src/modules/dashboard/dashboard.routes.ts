import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@hostctl/domain';
import { sendProblem } from '../../plugins/errors.js';
import { defaultDashboardDir, loadDashboardFiles, type DashboardFile } from './dashboard-files.js';

/** Paths that belong to the API and the probes: never answered with the dashboard's page. */
const SERVER_PREFIXES = ['/api', '/hooks', '/livez', '/readyz', '/metrics'];

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>hostctl: dashboard not built</title></head>
<body>
<main>
<h1>The dashboard is not built</h1>
<p>This API serves the web dashboard from <code>apps/web/dist</code>, which does not exist yet.
Build it with <code>pnpm --filter @hostctl/web build</code> (<code>bash scripts/stack-up.sh</code> does this),
or set <code>DASHBOARD_DIR</code>. The API itself works: see <a href="/api/docs">/api/docs</a>.</p>
</main>
</body>
</html>
`;

/**
 * The page may run only its own scripts and styles and talk only to this origin (REST and the
 * live WebSockets). React sets styles through the DOM, which style-src does not restrict.
 */
function dashboardCsp(publicUrl: string): string {
  const url = new URL(publicUrl);
  const socket = `${url.protocol === 'https:' ? 'wss' : 'ws'}://${url.host}`;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${socket}`,
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * The web dashboard at /: its built files (hashed assets cached for good, index.html revalidated
 * every time) and index.html for any other browser navigation outside the API, so deep links such
 * as /services/:id work. Everything else that matches no route still gets the API's 404 problem.
 */
export function registerDashboardRoutes(
  app: FastifyInstance,
  deps: { dir: string; publicUrl: string },
): void {
  const dir = deps.dir || defaultDashboardDir();
  const csp = dashboardCsp(deps.publicUrl);
  let files: Map<string, DashboardFile> | null = null;

  // Read once when there is a build; without one, looked for again on each request so a build
  // made after the API started is picked up.
  async function currentFiles(): Promise<Map<string, DashboardFile> | null> {
    files ??= await loadDashboardFiles(dir);
    return files;
  }

  async function answer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const urlPath = request.url.split('?')[0] ?? '/';
    if (SERVER_PREFIXES.some((prefix) => urlPath === prefix || urlPath.startsWith(`${prefix}/`)))
      return notFound(reply);
    const built = await currentFiles();
    // The root is the page itself, whatever the client accepts.
    const file = built?.get(urlPath === '/' ? '/index.html' : urlPath);
    if (file) return sendFile(request, reply, file);
    if (!built && (urlPath === '/' || acceptsHtml(request))) return notBuilt(request, reply);
    // A missing asset is a 404, not the page: a stale index.html must not get HTML for a script.
    if (!built || urlPath.startsWith('/assets/') || !acceptsHtml(request)) return notFound(reply);
    const page = built.get('/index.html');
    return page ? sendFile(request, reply, page) : notFound(reply);
  }

  function sendFile(request: FastifyRequest, reply: FastifyReply, file: DashboardFile): FastifyReply {
    reply
      .type(file.type)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('vary', 'accept-encoding');
    if (file.type.startsWith('text/html')) {
      reply.header('content-security-policy', csp).header('referrer-policy', 'same-origin');
    }
    if (file.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
    return reply.send(file.body);
  }

  const route = { config: { permission: 'public' as const }, schema: { hide: true }, handler: answer };
  app.get('/', route);
  app.get('/*', route);
}

/** The API's own 404 problem, as for any path no route matches. */
function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

function notBuilt(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (acceptsHtml(request)) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
  return sendProblem(
    request,
    reply,
    new DomainError(
      'dependency_unavailable',
      'the web dashboard is not built: run `pnpm --filter @hostctl/web build` or set DASHBOARD_DIR',
    ),
  );
}

/** Browsers ask for text/html when navigating; API clients and scripts do not. */
function acceptsHtml(request: FastifyRequest): boolean {
  return String(request.headers.accept ?? '').includes('text/html');
}
