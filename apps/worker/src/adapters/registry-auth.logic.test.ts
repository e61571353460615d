import { ConfigError } from '@hostctl/config';
import { describe, expect, it } from 'vitest';
import { basicAuthorization, nodePullAuthOf, registryAuthOf } from './registry-auth.js';

const settings = (username: string, password: string, registry = 'registry.internal:5000') => ({
  REGISTRY: registry,
  REGISTRY_USERNAME: username,
  REGISTRY_PASSWORD: password,
});

describe('platform registry credentials', () => {
  it('are anonymous when neither is set, and for REGISTRY when both are', () => {
    expect(registryAuthOf(settings('', ''))).toBeUndefined();
    expect(registryAuthOf(settings('nodes', 's3cr3t-pw'))).toEqual({
      username: 'nodes',
      password: 's3cr3t-pw',
      serveraddress: 'registry.internal:5000',
    });
  });

  it('refuse half a pair or credentials without a registry, naming the variable and never the password', () => {
    const problems = (input: ReturnType<typeof settings>) => {
      try {
        registryAuthOf(input);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('accepted');
    };
    expect(problems(settings('nodes', ''))).toEqual(['REGISTRY_PASSWORD: required with REGISTRY_USERNAME']);
    expect(problems(settings('', 's3cr3t-pw'))).toEqual([
      'REGISTRY_USERNAME: required with REGISTRY_PASSWORD',
    ]);
    const withoutRegistry = problems(settings('nodes', 's3cr3t-pw', ''));
    expect(withoutRegistry).toEqual(['REGISTRY: required with registry credentials (they are for it)']);
    expect(JSON.stringify(withoutRegistry)).not.toContain('s3cr3t-pw');
  });

  it('make the HTTP Basic header the registry API expects', () => {
    const auth = { username: 'nodes', password: 'pa:ss', serveraddress: 'r:5000' };
    expect(basicAuthorization(auth)).toBe(`Basic ${Buffer.from('nodes:pa:ss').toString('base64')}`);
  });

  it('the nodes’ read-only pair is for REGISTRY_PULL (else REGISTRY), both or neither', () => {
    const pull = (username: string, password: string, pullRegistry = '') => ({
      REGISTRY: 'registry.internal:5000',
      REGISTRY_PULL: pullRegistry,
      REGISTRY_PULL_USERNAME: username,
      REGISTRY_PULL_PASSWORD: password,
    });
    expect(nodePullAuthOf(pull('', ''))).toBeUndefined();
    expect(nodePullAuthOf(pull('nodes', 'r3ad-only', 'registry.internal:5001'))).toEqual({
      username: 'nodes',
      password: 'r3ad-only',
      serveraddress: 'registry.internal:5001',
    });
    expect(nodePullAuthOf(pull('nodes', 'r3ad-only'))?.serveraddress).toBe('registry.internal:5000');
    expect(() => nodePullAuthOf(pull('nodes', ''))).toThrow(ConfigError);
  });
});
