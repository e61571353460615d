import { refuse, type PolicyResult } from './policy-result.js';

/**
 * Branch names as `git check-ref-format --branch` accepts them (the rules of
 * git-check-ref-format(1) applied to refs/heads/<name>), checked in code so the API needs no git
 * binary. Stricter than git in two ways: a leading "-" is refused (it would read as an option),
 * and so is "HEAD" (not a branch). Length is bounded like the API field (255).
 */
export const MAX_BRANCH_LENGTH = 255;

export function checkBranch(name: string): PolicyResult {
  if (typeof name !== 'string' || name.length === 0) return refuse('is empty');
  if (name.length > MAX_BRANCH_LENGTH) return refuse(`is longer than ${MAX_BRANCH_LENGTH} characters`);
  if (name.startsWith('-')) return refuse('must not start with "-"');
  if (name === 'HEAD' || name === '@') return refuse(`"${name}" is not a branch name`);
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name))
    return refuse('must not contain spaces, control characters or any of ~ ^ : ? * [ \\');
  if (name.includes('..')) return refuse('must not contain ".."');
  if (name.includes('@{')) return refuse('must not contain "@{"');
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//'))
    return refuse('must not start or end with "/" or contain "//"');
  if (name.endsWith('.')) return refuse('must not end with "."');
  for (const component of name.split('/')) {
    if (component.startsWith('.')) return refuse('must not have a component starting with "."');
    if (component.endsWith('.lock')) return refuse('must not have a component ending with ".lock"');
  }
  return { ok: true };
}
