import { describe, expect, it } from 'vitest';
import { ProblemError, readProblem, toProblem } from './problem.js';

describe('readProblem', () => {
  it('reads every field of an RFC 9457 body the API sends', () => {
    const problem = readProblem({
      type: 'https://hostctl.dev/problems/validation_failed',
      status: 400,
      title: 'Invalid request',
      detail: 'name must match ^[a-z]',
      code: 'validation_failed',
      request_id: 'req-7',
      errors: [{ path: '/body/name', message: 'must match ^[a-z]' }],
    });
    expect(problem).toEqual({
      title: 'Invalid request',
      detail: 'name must match ^[a-z]',
      code: 'validation_failed',
      requestId: 'req-7',
      errors: [{ path: '/body/name', message: 'must match ^[a-z]' }],
      quota: null,
    });
  });

  it("reads a quota_exceeded refusal's figures, and whose quota it is", () => {
    const quota = { name: 'api_keys', limit: 5, usage: 5, requested: 1 };
    expect(readProblem({ code: 'quota_exceeded', quota: { ...quota, customer_id: 'c-1' } }).quota).toEqual({
      ...quota,
      customerId: 'c-1',
    });
    expect(readProblem({ quota: { ...quota, customer_id: null } }).quota).toEqual({
      ...quota,
      customerId: null,
    });
    expect(readProblem({ quota: { ...quota, limit: '5' } }).quota).toBeNull();
    expect(ProblemError.from(409, { quota: { ...quota, customer_id: 'c-1' } }).quota).toMatchObject({
      name: 'api_keys',
    });
  });

  it('keeps only what has the documented type: a proxy page or a foreign body reads as nothing', () => {
    const empty = { title: null, detail: null, code: null, requestId: null, errors: [], quota: null };
    expect(readProblem('<html>502 Bad Gateway</html>')).toEqual(empty);
    expect(readProblem(null)).toEqual(empty);
    expect(readProblem({ title: 42, code: ['x'], errors: 'name' })).toEqual(empty);
    expect(
      readProblem({ errors: [{ path: '/body/a' }, { path: '/body/b', message: 'required' }] }).errors,
    ).toEqual([{ path: '/body/b', message: 'required' }]);
  });
});

describe('ProblemError', () => {
  it('from a problem body: its title, detail, code, fields and request id', () => {
    const error = ProblemError.from(409, {
      title: 'Name already in use',
      detail: 'a service named web exists',
      code: 'name_taken',
      request_id: 'req-9',
    });
    expect(error).toMatchObject({
      status: 409,
      title: 'Name already in use',
      detail: 'a service named web exists',
      code: 'name_taken',
      requestId: 'req-9',
    });
    expect(error.message).toBe('Name already in use: a service named web exists');
  });

  it('from a body that is not a problem: the status, and the text as the detail', () => {
    const error = ProblemError.from(502, 'upstream timed out');
    expect(error).toMatchObject({ status: 502, title: 'Request failed (502)', detail: 'upstream timed out' });
  });

  it('toProblem turns anything thrown into one', () => {
    expect(toProblem(new TypeError('Failed to fetch'))).toMatchObject({
      status: 0,
      title: 'The request did not complete',
      detail: 'Failed to fetch',
    });
    const original = new ProblemError(404, 'Not found', 'no such service');
    expect(toProblem(original)).toBe(original);
  });
});
