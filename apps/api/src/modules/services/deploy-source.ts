import { parseCompose } from '@hostctl/compose';
import { DomainError } from '@hostctl/domain';
import { resolveTemplateVariables, type Template } from '@hostctl/templates';
import type { CreateServiceBody } from './services.schemas.js';

export interface DeploySource {
  compose: string;
  variables: Record<string, string>;
  templateId: string | null;
}

/**
 * What a create request will deploy, checked before anything is stored: compose and template
 * definitions are run through the compose policy now, so a refused request leaves no trace.
 * git and ai sources are checked by the worker when it has the repository.
 */
export function resolveDeploySource(
  body: CreateServiceBody,
  catalog: ReadonlyMap<string, Template>,
): DeploySource {
  const given = body.variables ?? {};
  switch (body.deploy_method) {
    case 'compose': {
      const compose = body.compose ?? '';
      parseCompose(compose, given);
      return { compose, variables: given, templateId: null };
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
      parseCompose(template.compose, variables);
      return { compose: template.compose, variables, templateId: template.id };
    }
    case 'git':
    case 'ai':
      return { compose: '', variables: given, templateId: null };
  }
}

/** Re-checks a stored service's definition with changed variables before they are saved. */
export function revalidateVariables(
  service: { deployMethod: string; templateId: string | null; compose: string },
  variables: Record<string, string>,
  catalog: ReadonlyMap<string, Template>,
): Record<string, string> {
  const template = service.templateId ? catalog.get(service.templateId) : undefined;
  if (template) {
    const resolved = resolveTemplateVariables(template, variables);
    parseCompose(template.compose, resolved);
    return resolved;
  }
  if (service.deployMethod === 'compose') parseCompose(service.compose, variables);
  return variables;
}
