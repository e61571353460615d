import { DomainError } from '@hostctl/domain';

/** A group's entity tag: its version, quoted (RFC 9110 §8.8.3). */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * The version a conditional write must still find (RFC 9110 §13.1.1). No If-Match: the version
 * just read. `*`: any current version. A list matches when one of its tags is current; weak tags
 * compare like strong ones (an ETag here is only ever the version). Anything else is a 412 at
 * once: the caller's copy is stale, or its header names no version of this group.
 */
export function versionMatching(ifMatch: string | undefined, current: number): number {
  if (ifMatch === undefined || ifMatch.trim() === '*') return current;
  const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (tags.includes(etagOf(current))) return current;
  throw new DomainError(
    'precondition_failed',
    `If-Match ${ifMatch.slice(0, 100)} does not name the current version of this variable group (${etagOf(current)}); read it again and retry`,
  );
}
