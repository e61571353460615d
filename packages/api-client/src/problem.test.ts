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
    });
  });

  it('keeps only what has the documented type: a proxy page or a foreign body reads as nothing', () => {
    const empty = { title: null, detail: null, code: null, requestId: null, errors: [] };
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
