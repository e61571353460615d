import { DomainError } from '@hostctl/domain';
import { checkImage, type ImagePolicy } from '@hostctl/source-policy';

/**
 * Every image a plan can run passes the image policy before anything is stored
 * (docs/security/image-policy.md); the worker repeats the check before it pulls. The compose
 * parser reports a refusal with the document's other problems (one round trip).
 */
export function imageChecker(policy: ImagePolicy): (image: string) => string | null {
  return (image) => {
    const verdict = checkImage(image, policy);
    return verdict.ok ? null : verdict.reason;
  };
}

/**
 * The compose parser names problems by their place in the document (`services.web.volumes[0]`);
 * the API names the request field the tenant wrote, as every other 400 does: the compose document
 * (`/body/compose/services/web/volumes/0`), or, for a template or a PATCH, the variables that
 * rendered the problem into an otherwise valid document (`/body/variables`).
 */
export function inRequestField<T>(field: 'compose' | 'variables', run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'invalid_compose' || !error.errors) throw error;
    const errors = error.errors.map((e) =>
      field === 'compose'
        ? { ...e, path: toPointer(e.path) }
        : { path: '/body/variables', message: `${e.path}: ${e.message}` },
    );
    throw new DomainError('invalid_compose', error.message, { errors, cause: error });
  }
}

/** Label and environment keys may hold dots themselves: the pointer is a readable guide, not exact. */
function toPointer(dotted: string): string {
  if (dotted === '(root)') return '/body/compose';
  const segments = dotted
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'));
  return `/body/compose/${segments.join('/')}`;
}
