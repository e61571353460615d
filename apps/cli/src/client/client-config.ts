import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from '../exit-codes.js';

export interface ClientConfig {
  url: string;
  token: string;
}

type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME/hostctl/config.json`, else `~/.config/hostctl/config.json`. */
export function configFilePath(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? homedir(), '.config');
  return path.join(base, 'hostctl', 'config.json');
}

/**
 * URL and token: HOSTCTL_TOKEN (or HOSTCTL_TOKEN_FILE, for secret files) with HOSTCTL_URL, which is
 * then required (a token is never sent to a default address: on a CI runner 127.0.0.1:3000 may be
 * anything); without a token variable, the file `hostctl login` wrote, URL and token together. A
 * token is only ever sent to the URL it came with: a stored token with a different HOSTCTL_URL is
 * refused rather than sent to that other server. A CI job sets the variables and never has a file.
 * Plain http:// is refused for any host but loopback unless `allowInsecure` (--insecure).
 */
export function loadClientConfig(
  env: Env = process.env,
  options: { allowInsecure: boolean } = { allowInsecure: false },
): ClientConfig {
  const envToken = tokenFromEnv(env);
  if (envToken !== undefined) {
    if (!env.HOSTCTL_URL)
      throw new CliError(
        'HOSTCTL_URL is not set: name the API the token is for (e.g. https://panel.example)',
        EXIT.usage,
      );
    return { url: tokenUrl(env.HOSTCTL_URL, options.allowInsecure), token: envToken };
  }
  const file = configFilePath(env);
  const stored = readStoredConfig(file);
  if (!stored?.token || !stored.url)
    throw new CliError(
      'no API token: set HOSTCTL_TOKEN (or HOSTCTL_TOKEN_FILE) and HOSTCTL_URL, or run `hostctl login`',
      EXIT.usage,
    );
  const url = tokenUrl(stored.url, options.allowInsecure);
  if (env.HOSTCTL_URL && validUrl(env.HOSTCTL_URL) !== url)
    throw new CliError(
      `HOSTCTL_URL (${validUrl(env.HOSTCTL_URL)}) is not the API the stored login is for (${url}): set HOSTCTL_TOKEN too, or \`hostctl login --url\` again`,
      EXIT.usage,
    );
  return { url, token: stored.token };
}

function tokenFromEnv(env: Env): string | undefined {
  if (env.HOSTCTL_TOKEN && env.HOSTCTL_TOKEN_FILE)
    throw new CliError('set either HOSTCTL_TOKEN or HOSTCTL_TOKEN_FILE, not both', EXIT.usage);
  if (env.HOSTCTL_TOKEN) return env.HOSTCTL_TOKEN.trim();
  if (!env.HOSTCTL_TOKEN_FILE) return undefined;
  try {
    return readFileSync(env.HOSTCTL_TOKEN_FILE, 'utf8').trim();
  } catch (error) {
    throw new CliError(
      `HOSTCTL_TOKEN_FILE: cannot read ${env.HOSTCTL_TOKEN_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      EXIT.usage,
    );
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/** Loopback only: 127.0.0.0/8, ::1, localhost. A token over plain http anywhere else is readable on the way. */
function isLoopback(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** A URL a token may be sent to: valid, and https:// unless it stays on this machine or --insecure. */
export function tokenUrl(raw: string, allowInsecure: boolean): string {
  const url = validUrl(raw);
  const { protocol, hostname } = new URL(url);
  if (protocol === 'http:' && !isLoopback(hostname) && !allowInsecure)
    throw new CliError(
      `refusing to send the token over plain http:// to ${hostname}: use https://, or pass --insecure if the network between is yours`,
      EXIT.usage,
    );
  return url;
}

export function validUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`HOSTCTL_URL is not a URL: ${JSON.stringify(raw)}`, EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`HOSTCTL_URL must be http:// or https://, not ${url.protocol}`, EXIT.usage);
  if (url.username || url.password)
    throw new CliError('HOSTCTL_URL must not carry credentials: use HOSTCTL_TOKEN', EXIT.usage);
  return url.href.replace(/\/+$/, '');
}

/**
 * The stored file, or undefined when there is none. A file others can read is refused rather
 * than used: the token in it is as good as a password, and a warning scrolls by unseen in CI.
 */
export function readStoredConfig(file: string): Partial<ClientConfig> | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      EXIT.usage,
    );
  }
  if ((mode & 0o077) !== 0)
    throw new CliError(
      `${file} is readable by other users (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${file}\` or \`hostctl login\` again`,
      EXIT.usage,
    );
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    return {
      ...(typeof parsed.url === 'string' ? { url: parsed.url } : {}),
      ...(typeof parsed.token === 'string' ? { token: parsed.token } : {}),
    };
  } catch {
    throw new CliError(`${file} is not valid JSON; run \`hostctl login\` again`, EXIT.usage);
  }
}

/** Writes the file with mode 0600 in a 0700 directory, replacing whatever was there. */
export function writeStoredConfig(file: string, config: ClientConfig): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  // Created 0600 from the start: never a moment when the token is readable by others.
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  // The umask may have narrowed the mode; it can only be narrower than 0600, but say it exactly.
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** True when a file was removed. */
export function removeStoredConfig(file: string): boolean {
  try {
    rmSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
