import type { Plan } from '@hostctl/compose';
import { DomainError, type FieldError } from '@hostctl/domain';
import { checkImage, type ImagePolicy } from '@hostctl/source-policy';

/**
 * Every image a plan can run passes the image policy before anything is stored
 * (docs/security/image-policy.md); the worker repeats the check before it pulls. `field` is where
 * the tenant wrote the image: the compose document, or the variables a template renders it from.
 */
export function checkPlanImages(plan: Plan, policy: ImagePolicy, field: 'compose' | 'variables'): void {
  const errors: FieldError[] = [];
  for (const container of plan.containers) {
    if (!container.image) continue;
    const verdict = checkImage(container.image, policy);
    if (verdict.ok) continue;
    errors.push(
      field === 'compose'
        ? { path: `/body/compose/services/${container.name}/image`, message: verdict.reason }
        : {
            path: '/body/variables',
            message: `services.${container.name}.image (${container.image}) ${verdict.reason}`,
          },
    );
  }
  if (errors.length === 0) return;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new DomainError('invalid_compose', `${errors[0]!.path}: ${errors[0]!.message}${more}`, { errors });
}

/**
 * The compose parser names problems by their place in the document (`services.web.volumes[0]`);
 * for a compose the tenant sent, the API names the request field as every other 400 does
 * (`/body/compose/services/web/volumes/0`).
 */
export function inComposeField<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'invalid_compose') throw error;
    if (!error.errors) throw error;
    throw new DomainError('invalid_compose', error.message, {
      errors: error.errors.map((e) => ({ ...e, path: toPointer(e.path) })),
      cause: error,
    });
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
