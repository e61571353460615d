import { describe, expect, it } from 'vitest';
import { ConfigError } from './load.js';
import { assertProductionSafe, KNOWN_DEFAULT_SECRETS, productionProblems } from './production-safety.js';

const safe = {
  NODE_ENV: 'production' as const,
  SESSION_SECRET: '3f9c1a7e5b2d8f406c1e9a3b7d5f2c8e0a6b4d1f',
  OIDC_ISSUER: 'https://id.example.org',
  OIDC_CLIENT_SECRET: 'b81f0c6e2a9d4735f1e8c3a0d6b92f47',
  COOKIE_SECURE: true,
  PUBLIC_URL: 'https://api.hostctl.example.org',
  // Empty: derived from SESSION_SECRET (docs/webhooks.md).
  WEBHOOK_SECRET_KEY: '',
};

type Case = [label: string, override: Partial<typeof safe>, variable: string];
const cases: Case[] = [
  [
    'a session secret shorter than 32 characters',
    { SESSION_SECRET: 'a1b2c3d4e5f6g7h8i9j0' },
    'SESSION_SECRET',
  ],
  ...KNOWN_DEFAULT_SECRETS.map((value): Case => [
    `the known default ${value}`,
    { SESSION_SECRET: value.padEnd(32, 'x') },
    'SESSION_SECRET',
  ]),
  [
    'a placeholder session secret',
    { SESSION_SECRET: 'change-me-change-me-change-me-0123456' },
    'SESSION_SECRET',
  ],
  ['a session secret of one repeated character', { SESSION_SECRET: 'a'.repeat(48) }, 'SESSION_SECRET'],
  [
    'the dev provider client secret',
    { OIDC_CLIENT_SECRET: 'dev-client-secret-not-for-production' },
    'OIDC_CLIENT_SECRET',
  ],
  ['an http:// issuer', { OIDC_ISSUER: 'http://id.example.org' }, 'OIDC_ISSUER'],
  ['an issuer that is not a URL', { OIDC_ISSUER: 'id.example.org' }, 'OIDC_ISSUER'],
  ['an http:// public URL', { PUBLIC_URL: 'http://api.example.org' }, 'PUBLIC_URL'],
  ['COOKIE_SECURE=false', { COOKIE_SECURE: false }, 'COOKIE_SECURE'],
  ['a short webhook key', { WEBHOOK_SECRET_KEY: 'k3y-0f-twenty-chars!' }, 'WEBHOOK_SECRET_KEY'],
  [
    'a placeholder webhook key',
    { WEBHOOK_SECRET_KEY: 'change-me-change-me-change-me-0123' },
    'WEBHOOK_SECRET_KEY',
  ],
];

describe('assertProductionSafe', () => {
  it('accepts a production config with strong secrets and https URLs', () => {
    expect(() => assertProductionSafe(safe)).not.toThrow();
  });

  it('ignores development and test configs', () => {
    const unsafe = {
      ...safe,
      SESSION_SECRET: 'short',
      OIDC_ISSUER: 'http://127.0.0.1:3100',
      COOKIE_SECURE: false,
    };
    expect(productionProblems({ ...unsafe, NODE_ENV: 'development' })).toEqual([]);
    expect(productionProblems({ ...unsafe, NODE_ENV: 'test' })).toEqual([]);
  });

  it.each(cases)('refuses %s', (_label, override, variable) => {
    const run = () => assertProductionSafe({ ...safe, ...override });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(new RegExp(`${variable}:`));
  });

  it('lists every problem at once', () => {
    const problems = productionProblems({
      ...safe,
      SESSION_SECRET: 'x',
      OIDC_ISSUER: 'http://idp',
      COOKIE_SECURE: false,
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['SESSION_SECRET', 'OIDC_ISSUER', 'COOKIE_SECURE']);
  });
});
