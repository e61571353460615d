import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load.js';
import { ApiConfigSchema } from './schemas.js';

// Secrets as files (`<NAME>_FILE`), the way Compose and Swarm mount them under /run/secrets.
const dir = mkdtempSync(path.join(tmpdir(), 'config-file-'));
const secretFile = (name: string, content: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
};
const base = {
  DATABASE_URL: 'postgresql://db/x',
  SECRETS_KEK: 'a2V5LWVuY3J5cHRpb24ta2V5LWZvci10ZXN0cy0zMmI=',
};

describe('loadConfig with <NAME>_FILE', () => {
  it('reads the value from the file and drops one trailing newline', () => {
    const secret = 'f'.repeat(16) + '0123456789abcdef0123';
    const config = loadConfig(ApiConfigSchema, {
      ...base,
      SESSION_SECRET_FILE: secretFile('session', `${secret}\n`),
    });
    expect(config.SESSION_SECRET).toBe(secret);
  });

  it('converts file values like environment values', () => {
    const config = loadConfig(ApiConfigSchema, {
      ...base,
      SESSION_SECRET: 's'.repeat(40),
      API_PORT_FILE: secretFile('port', '8080\n'),
    });
    expect(config.API_PORT).toBe(8080);
  });

  it('refuses both the variable and its _FILE', () => {
    const run = () =>
      loadConfig(ApiConfigSchema, {
        ...base,
        SESSION_SECRET: 's'.repeat(40),
        SESSION_SECRET_FILE: secretFile('both', 'x'),
      });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/SESSION_SECRET: set either SESSION_SECRET or SESSION_SECRET_FILE/);
  });

  it('names an unreadable file', () => {
    expect(() =>
      loadConfig(ApiConfigSchema, { ...base, SESSION_SECRET_FILE: path.join(dir, 'missing') }),
    ).toThrow(/SESSION_SECRET_FILE: cannot read .*missing \(ENOENT\)/);
  });
});
