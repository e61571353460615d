import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH, ROOT } from './config.js';
import { startProcess, waitHttp, type Proc } from './proc.js';

/**
 * The release suite's own Caddy (the `caddy` binary scripts/setup-services.sh installs), on bench
 * ports, configured like the dev stack's (scripts/lib/caddy.sh: server `hostctl`, a catch-all 404):
 * a bench worker routes to it, so the dev stack's proxy is never touched. The TLS suite's worker
 * adds its HTTPS listener (127.0.0.1:39322) and certificate the way production's does.
 */
export interface BenchCaddy {
  proc: Proc;
  adminUrl: string;
  httpPort: number;
}

export async function startBenchCaddy(): Promise<BenchCaddy> {
  const dir = path.join(ROOT, '.data', 'bench', 'caddy');
  mkdirSync(path.join(dir, 'config'), { recursive: true });
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const adminUrl = `http://127.0.0.1:${BENCH.ports.caddyAdmin}`;
  const config = {
    admin: { listen: `127.0.0.1:${BENCH.ports.caddyAdmin}`, config: { persist: false } },
    apps: {
      http: {
        // Caddy serves TLS on every listener of a server with connection policies except the one
        // on http_port (default 80): the TLS suite adds those policies, and 39320 must stay plain.
        http_port: BENCH.ports.caddyHttp,
        https_port: BENCH.ports.caddyHttps,
        servers: {
          hostctl: {
            listen: [`127.0.0.1:${BENCH.ports.caddyHttp}`],
            automatic_https: { disable: true },
            routes: [
              {
                '@id': 'hostctl-catch-all',
                handle: [{ handler: 'static_response', status_code: 404, body: 'no such service' }],
                terminal: true,
              },
            ],
          },
        },
      },
    },
  };
  const file = path.join(dir, 'caddy.json');
  writeFileSync(file, JSON.stringify(config));
  const proc = startProcess('caddy', 'caddy', ['run', '--config', file], {
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
  });
  await waitHttp(proc, `${adminUrl}/config/`);
  return { proc, adminUrl, httpPort: BENCH.ports.caddyHttp };
}
