import type { Static, TObject } from 'typebox';
import { Value } from 'typebox/value';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the variables a schema declares from `env`, applies defaults and converts types. */
export function loadConfig<S extends TObject>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): Static<S> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const value = Value.Convert(schema, Value.Default(schema, raw));
  const problems = [...Value.Errors(schema, value)].map((error) => {
    const name = error.instancePath.replace(/^\//, '') || missingName(error.params);
    return `${name}: ${error.message}`;
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return value as Static<S>;
}

function missingName(params: unknown): string {
  const props = (params as { requiredProperties?: string[] }).requiredProperties;
  return props?.join(', ') ?? '(root)';
}
