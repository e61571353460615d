import { readFileSync } from 'node:fs';
import type { Static, TObject } from 'typebox';
import { Value } from 'typebox/value';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the variables a schema declares from `env`, applies defaults and converts types. Any
 * variable can instead come from a file named by `<NAME>_FILE` (Docker/Compose secrets), so secrets
 * need not sit in the environment; one trailing newline is dropped.
 */
export function loadConfig<S extends TObject>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): Static<S> {
  const raw: Record<string, unknown> = {};
  const fileProblems: string[] = [];
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    const file = env[`${key}_FILE`];
    if (file !== undefined && file !== '') {
      if (value !== undefined && value !== '') {
        fileProblems.push(`${key}: set either ${key} or ${key}_FILE, not both`);
        continue;
      }
      try {
        raw[key] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch (error) {
        fileProblems.push(
          `${key}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        );
      }
      continue;
    }
    if (value !== undefined && value !== '') raw[key] = value;
  }
  if (fileProblems.length > 0) throw new ConfigError(fileProblems);
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
