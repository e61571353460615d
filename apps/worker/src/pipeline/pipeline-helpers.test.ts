import { DomainError } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { namesRegistryHost } from './images.step.js';
import { PermanentStepError, createRedactor, isPermanent, messageOf } from './step-errors.js';

describe('namesRegistryHost', () => {
  it.each([
    ['local/busybox:1', false],
    ['nginx', false],
    ['library/nginx:1.27', false],
    ['127.0.0.1:5000/busybox:1', true],
    ['localhost/app', true],
    ['registry.example.com/team/app@sha256:abc', true],
  ])('%s → %s', (reference, expected) => {
    expect(namesRegistryHost(reference)).toBe(expected);
  });
});

describe('failure classification', () => {
  it.each([
    [new DomainError('invalid_compose', 'x'), true],
    [new DomainError('image_unavailable', 'x'), true],
    [new DomainError('runtime_error', 'x'), false],
    [new PermanentStepError('x'), true],
    [new Error('socket hang up'), false],
  ])('%s permanent: %s', (error, expected) => {
    expect(isPermanent(error)).toBe(expected);
  });

  it('lists every compose problem in the message', () => {
    const error = new DomainError('invalid_compose', 'a: b (and 1 more)', {
      errors: [
        { path: 'a', message: 'b' },
        { path: 'c', message: 'd' },
      ],
    });
    expect(messageOf(error)).toBe('a: b; c: d');
  });
});

describe('createRedactor', () => {
  it('masks variable values of 4+ characters, longest first', () => {
    const redact = createRedactor({ A: 'secret', B: 'secret-longer', C: 'abc' });
    expect(redact('x secret-longer y secret z abc')).toBe('x *** y *** z abc');
  });
});
