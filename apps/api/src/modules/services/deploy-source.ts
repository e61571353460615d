import {
  DEFAULT_CONTAINER_LIMITS,
  parseCompose,
  planCapacity,
  type ContainerLimitPolicy,
} from '@hostctl/compose';
import type { CapacityClaim } from '@hostctl/db';
import { DomainError, type FieldError } from '@hostctl/domain';
import {
  checkBranch,
  checkGitUrl,
  type AllowedHost,
  type Endpoint,
  type ImagePolicy,
} from '@hostctl/source-policy';
import { resolveTemplateVariables, type Template } from '@hostctl/templates';
import { imageChecker, inRequestField } from './plan-images.js';
import type { CreateServiceBody } from './services.schemas.js';

export interface DeploySource {
  compose: string;
  variables: Record<string, string>;
  templateId: string | null;
  /**
   * What the definition claims of the customer's quotas; git/ai: one container with the default
   * limits until the worker reads the repository.
   */
  capacity: CapacityClaim;
}

export interface DeploySourceOptions {
  /** GIT_ALLOWED_HOSTS: hosts (and ports) that may be private/loopback and use http:// or git://. */
  gitAllowedHosts: readonly AllowedHost[];
  /** The control plane's endpoints: never a git or registry target. */
  protectedEndpoints: readonly Endpoint[];
  imagePolicy: ImagePolicy;
  /** Defaults and ceilings of container limits (CONTAINER_*); the built-in ones when absent. */
  containerLimits?: ContainerLimitPolicy | undefined;
  /**
   * The attached variable groups' values, merged: a compose may interpolate them, under the
   * service's own (docs/secrets.md#variable-groups). Checked with, never stored as the service's.
   */
  groupVariables?: Record<string, string>;
}

/**
 * What a create request will deploy, checked before anything is stored: compose and template
 * definitions are run through the compose policy now, so a refused request leaves no trace.
 * git and ai sources get the network-free URL and branch checks now; the worker repeats them,
 * resolves the host (SSRF guard) and checks the repository's contents when it has them.
 */
export function resolveDeploySource(
  body: CreateServiceBody,
  catalog: ReadonlyMap<string, Template>,
  options: DeploySourceOptions,
): DeploySource {
  const given = body.variables ?? {};
  const parseOptions = {
    checkImage: imageChecker(options.imagePolicy),
    ...(options.containerLimits ? { limits: options.containerLimits } : {}),
  };
  switch (body.deploy_method) {
    case 'compose': {
      const compose = body.compose ?? '';
      const environment = { ...options.groupVariables, ...given };
      const plan = inRequestField('compose', () => parseCompose(compose, environment, parseOptions));
      return { compose, variables: given, templateId: null, capacity: planCapacity(plan.containers) };
    }
    case 'template': {
      const template = catalog.get(body.template_id ?? '');
      if (!template) {
        throw new DomainError(
          'validation_failed',
          `/body/template_id names no template; see GET /api/templates`,
          {
            errors: [{ path: '/body/template_id', message: 'names no template in the catalog' }],
          },
        );
      }
      const variables = resolveTemplateVariables(template, given);
      const plan = inRequestField('variables', () => parseCompose(template.compose, variables, parseOptions));
      return {
        compose: template.compose,
        variables,
        templateId: template.id,
        capacity: planCapacity(plan.containers),
      };
    }
    case 'git':
    case 'ai':
      checkRepositorySource(body, options);
      return { compose: '', variables: given, templateId: null, capacity: repositoryCapacity(options) };
  }
}

/** A git/ai service before its first deploy: one container with the default limits. */
function repositoryCapacity(options: DeploySourceOptions): CapacityClaim {
  const limits = options.containerLimits ?? DEFAULT_CONTAINER_LIMITS;
  return {
    containers: 1,
    memoryMb: Math.ceil(limits.defaultMemoryBytes / (1024 * 1024)),
    millicpus: Math.ceil(limits.defaultNanoCpus / 1e6),
  };
}

function checkRepositorySource(body: CreateServiceBody, options: DeploySourceOptions): void {
  const errors: FieldError[] = [];
  const policy = { allowedHosts: options.gitAllowedHosts, protectedEndpoints: options.protectedEndpoints };
  for (const field of ['git_url', 'ai_url'] as const) {
    const url = body[field];
    if (url === undefined) continue;
    const verdict = checkGitUrl(url, policy);
    if (!verdict.ok) errors.push({ path: `/body/${field}`, message: verdict.reason });
  }
  if (body.git_branch !== undefined) {
    const verdict = checkBranch(body.git_branch);
    if (!verdict.ok) errors.push({ path: '/body/git_branch', message: verdict.reason });
  }
  if (errors.length > 0) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
      errors,
    });
  }
}

/**
 * Re-checks a stored service's definition with changed variables before they are saved, and says
 * what it then claims (variables can set replicas and limits); undefined when it cannot tell
 * (git/ai: the worker counts).
 */
export function revalidateVariables(
  service: { deployMethod: string; templateId: string | null; compose: string },
  variables: Record<string, string>,
  catalog: ReadonlyMap<string, Template>,
  options: Pick<DeploySourceOptions, 'imagePolicy' | 'containerLimits' | 'groupVariables'>,
): { variables: Record<string, string>; capacity?: CapacityClaim } {
  const parseOptions = {
    checkImage: imageChecker(options.imagePolicy),
    ...(options.containerLimits ? { limits: options.containerLimits } : {}),
  };
  const template = service.templateId ? catalog.get(service.templateId) : undefined;
  if (template) {
    const resolved = resolveTemplateVariables(template, variables);
    const plan = inRequestField('variables', () => parseCompose(template.compose, resolved, parseOptions));
    return { variables: resolved, capacity: planCapacity(plan.containers) };
  }
  // The stored compose passed at create; changed variables can still change what an image names.
  if (service.deployMethod === 'compose') {
    const environment = { ...options.groupVariables, ...variables };
    const plan = inRequestField('variables', () => parseCompose(service.compose, environment, parseOptions));
    return { variables, capacity: planCapacity(plan.containers) };
  }
  return { variables };
}
