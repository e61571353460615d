import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { loadAccounts } from './accounts.js';
import { handleInteraction } from './interactions.js';
import { messagePage } from './pages.js';
import { providerConfiguration, type ClientSettings } from './provider-config.js';

export interface DevIdpOptions extends ClientSettings {
  host: string;
  /** 0 picks a free port; the issuer then follows the port actually bound. */
  port: number;
  /** Defaults to http://<host>:<port>. */
  issuer?: string;
  accountsFile: string;
}

export interface DevIdp {
  issuer: string;
  port: number;
  close(): Promise<void>;
}

/** Listens first, so that with port 0 the issuer can name the port that was really bound. */
export async function startDevIdp(options: DevIdpOptions): Promise<DevIdp> {
  const accounts = loadAccounts(options.accountsFile);
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const issuer = options.issuer ?? `http://${options.host}:${port}`;
  const provider = new Provider(issuer, providerConfiguration(accounts, options));
  const callback = provider.callback();

  server.on('request', (req, res) => {
    handleInteraction(provider, accounts, req, res)
      .then(async (handled) => {
        if (!handled) await callback(req, res);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
        res.end(messagePage('Sign-in error', { error: 'internal error' }));
      });
  });

  return {
    issuer,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
