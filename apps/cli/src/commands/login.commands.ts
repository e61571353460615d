import { must } from '@hostctl/api-client';
import { assertKnownFlags, operands, optionalFlag, UsageError } from '../args.js';
import { configFilePath, removeStoredConfig, tokenUrl, writeStoredConfig } from '../client/client-config.js';
import { printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { EXIT } from '../exit-codes.js';

/**
 * `login [--url URL] [--token-stdin]`: checks the token against GET /api/auth/me, then stores URL
 * and token in the config file (0600). The token never comes from the command line, where `ps`
 * and shell history would keep it: standard input, HOSTCTL_TOKEN, or a prompt without echo.
 */
export const login: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['url', 'token-stdin']);
  operands(context.args, 1, []);
  const raw = optionalFlag(context.args, 'url') ?? context.env.HOSTCTL_URL;
  if (raw === undefined) throw new UsageError('give the API to log in to: --url URL (or HOSTCTL_URL)');
  const url = tokenUrl(raw, context.args.flags.get('insecure') === true);
  const token = (await readToken(context)).trim();
  if (token === '') throw new UsageError('the token is empty');
  const me = await must(context.clientFor({ url, token }).api.GET('/api/auth/me'));
  const file = configFilePath(context.env);
  writeStoredConfig(file, { url, token });
  if (context.json)
    printJson(context, { url, email: me.email, role: me.role, customer_id: me.customer_id, config: file });
  else context.out(`logged in to ${url} as ${me.email} (${me.role}); token stored in ${file}`);
  return EXIT.ok;
};

/** `logout`: forgets the stored token. The key itself stays valid: revoke it in the API to end it. */
export const logout: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  operands(context.args, 1, []);
  const file = configFilePath(context.env);
  const removed = removeStoredConfig(file);
  if (context.json) printJson(context, { removed, config: file });
  else
    context.out(
      removed
        ? `removed ${file} (the API key itself is still valid until revoked)`
        : `no stored login (${file})`,
    );
  return EXIT.ok;
};

async function readToken(context: CommandContext): Promise<string> {
  if (context.args.flags.get('token-stdin') === true) return context.readStdin();
  if (context.env.HOSTCTL_TOKEN) return context.env.HOSTCTL_TOKEN;
  if (!process.stdin.isTTY) throw new UsageError('no token: pipe it with --token-stdin or set HOSTCTL_TOKEN');
  return promptHidden('API token: ');
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    let value = '';
    const finish = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new UsageError('interrupted'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on('data', onData);
  });
}
