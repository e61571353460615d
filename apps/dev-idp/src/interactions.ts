import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { AccountBook } from './accounts.js';
import { loginPage, messagePage } from './pages.js';

const BODY_LIMIT = 16 * 1024;

/**
 * The provider's login UI: GET /interaction/:uid shows the form, POST …/login checks the password,
 * POST …/abort cancels (the client receives error=access_denied). Returns false for other paths.
 */
export async function handleInteraction(
  provider: Provider,
  accounts: AccountBook,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const match = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|abort))?$/.exec(
    new URL(req.url ?? '/', 'http://x').pathname,
  );
  if (!match) return false;
  const [, uid = '', action] = match;
  try {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid)
      return send(res, 400, messagePage('Sign-in error', { error: 'interaction mismatch; start again' }));
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';

    if (req.method === 'GET' && action === undefined) {
      return send(res, 200, loginPage({ uid, clientId }));
    }
    if (req.method === 'POST' && action === 'abort') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user cancelled the sign-in' },
        { mergeWithLastSubmission: false },
      );
      return true;
    }
    if (req.method === 'POST' && action === 'login') {
      const form = new URLSearchParams(await readBody(req));
      const email = form.get('email') ?? '';
      const account = accounts.verify(email, form.get('password') ?? '');
      if (!account)
        return send(res, 401, loginPage({ uid, clientId, email, error: 'Invalid email or password.' }));
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      );
      return true;
    }
    return send(res, 405, messagePage('Sign-in error', { error: 'method not allowed' }));
  } catch (error) {
    // Expired or unknown interaction (its cookie is gone): the user has to start from the app again.
    return send(res, 400, messagePage('Sign-in error', { error: (error as Error).message }));
  }
}

function send(res: ServerResponse, status: number, html: string): true {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
  return true;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
