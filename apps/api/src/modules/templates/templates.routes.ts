import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Template } from '@hostctl/templates';
import { problemResponses } from '../../http/schemas.js';

const TemplateVariable = Type.Object({
  name: Type.String(),
  description: Type.String(),
  required: Type.Boolean(),
  default: Type.Optional(Type.String()),
  generated: Type.Boolean({ description: 'A random secret is generated when no value is given' }),
  secret: Type.Boolean({
    description:
      'A password or key: the service keeps it as a secret variable (write-only), so a form masks its input',
  }),
  pattern: Type.Optional(Type.String()),
});

const TemplateItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  variables: Type.Array(TemplateVariable),
  compose: Type.String(),
});

/** GET /api/templates: the catalog a dashboard offers (beyond the spec; docs/templates.md). */
export function registerTemplateRoutes(
  instance: FastifyInstance,
  catalog: ReadonlyMap<string, Template>,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const items = [...catalog.values()].map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    category: t.category,
    compose: t.compose,
    variables: t.variables.map((v) => ({
      name: v.name,
      description: v.description,
      required: v.required,
      generated: v.generate !== undefined,
      secret: v.secret,
      ...(v.default !== undefined ? { default: v.default } : {}),
      ...(v.pattern !== undefined ? { pattern: v.pattern } : {}),
    })),
  }));

  app.get('/api/templates', {
    config: { permission: 'templates:read' },
    schema: {
      response: {
        200: Type.Object({ data: Type.Array(TemplateItem), total: Type.Integer() }),
        ...problemResponses(),
      },
    },
    handler: async () => ({ data: items, total: items.length }),
  });
}
