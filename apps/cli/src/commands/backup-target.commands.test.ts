import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeApi, run, type Answer } from '../test-support/fake-api.js';

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
const SET = ['backups', 'target', 'set', CUSTOMER];
const PLACE = ['--endpoint', 'https://s3.example.com', '--bucket', 'acme'];
const NO_TARGET: Answer = [
  404,
  {
    status: 404,
    title: 'Not found',
    detail: `customer ${CUSTOMER} has no backup target of its own to change`,
  },
];
const bodyOf = (api: ReturnType<typeof fakeApi>, method: string): unknown =>
  JSON.parse(api.requests.find((r) => r.method === method)?.body ?? 'null');

describe('hostctl backups target set, with a target stored', () => {
  it('sends only the flags given, as a PATCH: the other fields stay as stored', async () => {
    const api = fakeApi({ [`PATCH ${URL}`]: [200, { ...TARGET, region: 'eu-west-1' }] });
    const result = await run([...SET, '--region', 'eu-west-1'], api.fetchImpl, undefined, 'not-a-secret\n');
    expect(result.code, result.stderr).toBe(0);
    expect(bodyOf(api, 'PATCH')).toEqual({ region: 'eu-west-1' });
    expect(api.requests.map((r) => r.method)).toEqual(['PATCH']);
    expect(result.stdout).toContain('region: eu-west-1');
  });

  it('sends a new key pair with the secret read from standard input, never an argument', async () => {
    const api = fakeApi({ [`PATCH ${URL}`]: [200, TARGET] });
    const result = await run(
      [...SET, '--bucket', 'acme-2', '--access-key-id', 'AKID', '--secret-key-stdin'],
      api.fetchImpl,
      undefined,
      'the-secret-key\n',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(bodyOf(api, 'PATCH')).toEqual({
      bucket: 'acme-2',
      access_key_id: 'AKID',
      secret_access_key: 'the-secret-key',
    });
    expect(result.stdout).not.toContain('the-secret-key');
  });

  it('sets the fields --reset names back to their defaults (null), the CA from --ca-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hostctl-ca-'));
    const ca = join(dir, 'ca.pem');
    await writeFile(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const api = fakeApi({ [`PATCH ${URL}`]: [200, TARGET] });
    const result = await run([...SET, '--reset', 'prefix,region', '--ca-file', ca], api.fetchImpl);
    expect(result.code, result.stderr).toBe(0);
    expect(bodyOf(api, 'PATCH')).toEqual({
      prefix: null,
      region: null,
      ca_certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    });
    const cleared = fakeApi({ [`PATCH ${URL}`]: [200, TARGET] });
    expect((await run([...SET, '--reset', 'ca-file'], cleared.fetchImpl)).code).toBe(0);
    expect(bodyOf(cleared, 'PATCH')).toEqual({ ca_certificate: null });
  });

  it('exits 1 with the API refusal when the secret would follow to another bucket', async () => {
    const api = fakeApi({
      [`PATCH ${URL}`]: [
        400,
        {
          status: 400,
          title: 'Invalid request',
          detail: '/body/secret_access_key: is required when the endpoint or the bucket changes',
          errors: [{ path: '/body/secret_access_key', message: 'is required' }],
        },
      ],
    });
    const result = await run([...SET, '--bucket', 'elsewhere'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/secret_access_key/);
    expect(api.requests.map((r) => r.method)).toEqual(['PATCH']);
  });
});

describe('hostctl backups target set, without a target yet', () => {
  it('creates it with a PUT of the flags when the PATCH finds none', async () => {
    const api = fakeApi({ [`PATCH ${URL}`]: NO_TARGET, [`PUT ${URL}`]: [200, TARGET] });
    const result = await run(
      [...SET, ...PLACE, '--access-key-id', 'AKID', '--secret-key-stdin', '--reset', 'prefix'],
      api.fetchImpl,
      undefined,
      'the-secret-key\n',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests.map((r) => r.method)).toEqual(['PATCH', 'PUT']);
    // PUT takes the defaults for what is left out: a reset field is simply not sent.
    expect(bodyOf(api, 'PUT')).toEqual({
      endpoint: 'https://s3.example.com',
      bucket: 'acme',
      access_key_id: 'AKID',
      secret_access_key: 'the-secret-key',
    });
    expect(result.stdout).toContain('has_credentials: true');
  });

  it('exits 1 saying what creates one when --endpoint or --bucket is missing, without a PUT', async () => {
    const api = fakeApi({ [`PATCH ${URL}`]: NO_TARGET });
    const result = await run([...SET, '--region', 'eu-west-1'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /has no backup target of its own.*to create one, give --endpoint, --bucket/,
    );
    expect(api.requests.map((r) => r.method)).toEqual(['PATCH']);
  });
});

describe('hostctl backups target set: usage (exit 2, no request)', () => {
  it.each([
    [
      'a secret without its key id',
      [...PLACE, '--secret-key-stdin'],
      'the-secret-key\n',
      /--access-key-id is required/,
    ],
    [
      'an empty secret on standard input',
      [...PLACE, '--access-key-id', 'AKID', '--secret-key-stdin'],
      '',
      /standard input held no secret access key/,
    ],
    ['no field at all', [], '', /at least one field to change/],
    ['an unknown --reset field', ['--reset', 'bucket'], '', /--reset takes prefix, region or ca-file/],
    ['a field both given and reset', ['--prefix', 'p', '--reset', 'prefix'], '', /contradict/],
  ])('refuses %s', async (_label, flags, stdin, message) => {
    const api = fakeApi({});
    const result = await run([...SET, ...flags], api.fetchImpl, undefined, stdin);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });
});

describe('hostctl backups target show|unset', () => {
  it('shows and unsets it', async () => {
    const api = fakeApi({ [`GET ${URL}`]: [200, TARGET], [`DELETE ${URL}`]: [204] });
    const shown = await run(['backups', 'target', 'show', CUSTOMER], api.fetchImpl);
    expect(shown.stdout).toContain('bucket: acme');
    const unset = await run(['backups', 'target', 'unset', CUSTOMER], api.fetchImpl);
    expect(unset.code).toBe(0);
    expect(unset.stdout).toMatch(/new backups go to the operator's/);
  });
});
