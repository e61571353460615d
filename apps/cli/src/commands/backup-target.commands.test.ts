import { describe, expect, it } from 'vitest';
import { fakeApi, run } from '../test-support/fake-api.js';

const CUSTOMER = '3f1c2a4e-1111-4222-8333-444455556666';
const URL = `/api/customers/${CUSTOMER}/backup-target`;
const TARGET = {
  customer_id: CUSTOMER,
  endpoint: 'https://s3.example.com:443',
  bucket: 'acme',
  prefix: 'hostctl',
  region: 'us-east-1',
  has_credentials: true,
};
const SET = [
  'backups',
  'target',
  'set',
  CUSTOMER,
  '--endpoint',
  'https://s3.example.com',
  '--bucket',
  'acme',
];

describe('hostctl backups target', () => {
  it('sets the target with the secret key read from standard input, never an argument', async () => {
    const api = fakeApi({ [`PUT ${URL}`]: [200, TARGET] });
    const result = await run(
      [...SET, '--access-key-id', 'AKID', '--secret-key-stdin'],
      api.fetchImpl,
      undefined,
      'the-secret-key\n',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(api.requests.find((r) => r.method === 'PUT')?.body ?? '{}')).toEqual({
      endpoint: 'https://s3.example.com',
      bucket: 'acme',
      access_key_id: 'AKID',
      secret_access_key: 'the-secret-key',
    });
    expect(result.stdout).toContain('has_credentials: true');
    expect(result.stdout).not.toContain('the-secret-key');
  });

  it('refuses to set without --secret-key-stdin (exit 2, no request)', async () => {
    const api = fakeApi({});
    const result = await run([...SET, '--access-key-id', 'AKID'], api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--secret-key-stdin is required/);
    expect(api.requests).toHaveLength(0);
  });

  it('shows and unsets it', async () => {
    const api = fakeApi({ [`GET ${URL}`]: [200, TARGET], [`DELETE ${URL}`]: [204] });
    const shown = await run(['backups', 'target', 'show', CUSTOMER], api.fetchImpl);
    expect(shown.stdout).toContain('bucket: acme');
    const unset = await run(['backups', 'target', 'unset', CUSTOMER], api.fetchImpl);
    expect(unset.code).toBe(0);
    expect(unset.stdout).toMatch(/new backups go to the operator's/);
  });
});
