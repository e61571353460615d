import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export interface TemplateVariable {
  name: string;
  description: string;
  required: boolean;
  default?: string;
  /** Generated when not given: a random secret of this many characters. */
  generate?: { length: number };
  /**
   * A password or key: a service keeps it as a secret variable however it was given
   * (docs/secrets.md#secret-variables). `secret: true` in the YAML, implied by `generate`.
   */
  secret: boolean;
  /** Anchored regular expression a value must match. */
  pattern?: string;
}

export interface Template {
  id: string;
  name: string;
  description: string;
  category: string;
  variables: TemplateVariable[];
  compose: string;
}

export const DEFAULT_TEMPLATES_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../templates',
);

/** Loads and shape-checks every `<id>.yaml` in the directory; a broken entry fails start-up loudly. */
export function loadCatalog(dir: string = DEFAULT_TEMPLATES_DIR): Map<string, Template> {
  const catalog = new Map<string, Template>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const id = file.slice(0, -'.yaml'.length);
    catalog.set(id, toTemplate(id, parse(readFileSync(path.join(dir, file), 'utf8')) as unknown));
  }
  return catalog;
}

function toTemplate(id: string, raw: unknown): Template {
  const doc = raw as Partial<Record<string, unknown>>;
  const fail = (why: string): never => {
    throw new Error(`template ${id}: ${why}`);
  };
  if (!/^[a-z0-9][a-z0-9-]*$/.test(id)) fail('file name must be a lowercase slug');
  if (typeof doc.name !== 'string' || typeof doc.compose !== 'string')
    fail('name and compose are required strings');
  const variables = ((doc.variables ?? []) as Partial<Record<string, unknown>>[]).map((v) => {
    if (typeof v.name !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(v.name))
      fail('variable names must be UPPER_SNAKE');
    const variable: TemplateVariable = {
      name: v.name as string,
      description: typeof v.description === 'string' ? v.description : '',
      required: v.required === true,
      secret: v.secret === true || typeof v.generate === 'number',
    };
    if (v.secret !== undefined && typeof v.secret !== 'boolean')
      fail(`variable ${variable.name}: secret must be true or false`);
    if (typeof v.default === 'string' || typeof v.default === 'number') variable.default = String(v.default);
    else if (v.default !== undefined) fail(`variable ${variable.name}: default must be a string or number`);
    if (typeof v.generate === 'number') variable.generate = { length: v.generate };
    if (typeof v.pattern === 'string') variable.pattern = v.pattern;
    return variable;
  });
  return {
    id,
    name: doc.name as string,
    description: typeof doc.description === 'string' ? doc.description : '',
    category: typeof doc.category === 'string' ? doc.category : 'other',
    variables,
    compose: doc.compose as string,
  };
}
