import { checkImage, resolveAndCheckHost, type ImagePolicy, type Lookup } from '@hostctl/source-policy';
import { PermanentStepError } from './step-errors.js';

/**
 * The worker's half of the image policy (docs/security/image-policy.md): the API checked the plan
 * at create time, but a plan can also come from a repository's compose file, or from a row written
 * behind the API's back, so every image is checked again right before anything reaches the engine,
 * and a registry host that is not allowlisted is resolved and refused when any address is internal.
 * A refusal fails this one deployment permanently.
 */
export interface ImageGuard {
  policy: ImagePolicy;
  /** Tests inject a resolver; production uses the system's. */
  lookup?: Lookup;
}

export async function assertImageAllowed(
  guard: ImageGuard,
  image: string,
  ownBuildPrefixes: readonly string[] = [],
): Promise<void> {
  const verdict = checkImage(image, guard.policy, { ownBuildPrefixes });
  if (!verdict.ok)
    throw new PermanentStepError(`image ${JSON.stringify(image)} refused: it ${verdict.reason}`);
  if (!verdict.mustResolveHost) return;
  const host = await resolveAndCheckHost(verdict.image.host ?? '', false, {
    allowlistName: 'REGISTRY_ALLOWED_HOSTS',
    ...(guard.lookup ? { lookup: guard.lookup } : {}),
  });
  if (!host.ok) throw new PermanentStepError(`image ${image} refused: its registry ${host.reason}`);
}
