import { DomainError, isDomainError, type FieldError } from '@hostctl/domain';
import { secretVariableNames, type Template } from '@hostctl/templates';
import { checkVariableBytes } from './variables.js';

/**
 * Secret variables (docs/secrets.md#secret-variables). A service keeps one map of every variable's
 * value (`services.variables`, sealed at rest, copied into each release and interpolated at deploy
 * exactly like today) and, beside it, which names are secret (`secret_names`: name → when it was
 * set). The API splits them: `variables` shows the plain ones as the spec says, `secret_variables`
 * only the names of the secret ones. Keeping the values in one map is what makes every path that
 * already handles variables (sealing, release records, redaction, the rollback rule) handle
 * secrets too, without a second copy to forget.
 */
interface StoredVariables {
  variables: Record<string, string>;
  secretNames: Record<string, string>;
}

type Changes = Record<string, string | null>;

/** The secret names that still have a value (a rollback can drop a value; its mark then means nothing). */
export function liveSecretNames(stored: {
  variables: unknown;
  secretNames: unknown;
}): Record<string, string> {
  const variables = asMap(stored.variables);
  return Object.fromEntries(Object.entries(asMap(stored.secretNames)).filter(([name]) => name in variables));
}

/** The detail's two fields: plain values, and for secrets only the name and when it was set. */
export function variablesView(stored: { variables: unknown; secretNames: unknown }) {
  const secrets = liveSecretNames(stored);
  const plain = Object.fromEntries(
    Object.entries(asMap(stored.variables)).filter(([name]) => !(name in secrets)),
  );
  const secretVariables = Object.fromEntries(
    Object.entries(secrets).map(([name, updatedAt]) => [name, { set: true as const, updated_at: updatedAt }]),
  );
  return { variables: plain, secret_variables: secretVariables };
}

/** A create's two maps as stored; a name in both is refused. */
export function combineOnCreate(
  plain: Record<string, string> | undefined,
  secret: Record<string, string> | undefined,
  now: Date,
): StoredVariables {
  const given = plain ?? {};
  const secrets = secret ?? {};
  checkVariableBytes(given, '/body/variables');
  checkVariableBytes(secrets, '/body/secret_variables');
  const both = Object.keys(secrets).filter((name) => name in given);
  if (both.length > 0)
    throw kindConflict(both.map((name) => ({ path: `/body/secret_variables/${name}`, message: ALSO_PLAIN })));
  const at = now.toISOString();
  return {
    variables: { ...given, ...secrets },
    secretNames: Object.fromEntries(Object.keys(secrets).map((name) => [name, at])),
  };
}

const ALSO_PLAIN = 'is also given under variables: a name is either plain or secret';

/**
 * A PATCH's changes applied to what is stored. Either map's null removes one of its own names. A
 * name changes kind only when the same request deletes it from the other map (`"variables":
 * {"X": null}, "secret_variables": {"X": "…"}` makes X secret); otherwise writing a name of the
 * other kind is refused, so a plain write never overwrites (or a plain delete removes) a secret.
 */
export function applyUpdate(
  current: StoredVariables,
  plain: Changes | undefined,
  secret: Changes | undefined,
  now: Date,
): StoredVariables {
  const isSecret = (name: string) => name in current.secretNames && name in current.variables;
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(plain ?? {})) {
    if (isSecret(name) && secret?.[name] !== null)
      errors.push({
        path: `/body/variables/${name}`,
        message: 'is a secret variable: change it under secret_variables',
      });
    else if (value !== null && secret?.[name] != null)
      errors.push({ path: `/body/secret_variables/${name}`, message: ALSO_PLAIN });
  }
  for (const [name, value] of Object.entries(secret ?? {})) {
    if (value !== null && name in current.variables && !isSecret(name) && plain?.[name] !== null)
      errors.push({
        path: `/body/secret_variables/${name}`,
        message:
          'is a plain variable: remove it under variables (null) in the same request to make it secret',
      });
  }
  if (errors.length > 0) throw kindConflict(errors);

  const variables = { ...current.variables };
  const secretNames = { ...liveSecretNames(current) };
  const at = now.toISOString();
  for (const [name, value] of Object.entries(secret ?? {})) {
    if (value !== null) {
      variables[name] = value;
      secretNames[name] = at;
    } else if (isSecret(name)) {
      delete variables[name];
      delete secretNames[name];
    }
  }
  for (const [name, value] of Object.entries(plain ?? {})) {
    if (name in secretNames) continue; // made secret above, or a secret (refused above)
    if (value === null) delete variables[name];
    else variables[name] = value;
  }
  checkVariableBytes(
    pick(variables, (name) => !(name in secretNames)),
    '/body/variables',
  );
  checkVariableBytes(
    pick(variables, (name) => name in secretNames),
    '/body/secret_variables',
  );
  return { variables, secretNames };
}

/**
 * The secret names with the template's password and key variables added
 * (docs/secrets.md#secret-variables): a password the catalog generates, and one the caller typed,
 * is a secret whichever map the client sent it under, so no client (the dashboard's create form, a
 * script) can leave one readable in the detail. `variables` is the map the service will store
 * (generated values included); a name already secret keeps when it was set.
 */
export function withTemplateSecrets(
  stored: StoredVariables,
  template: Template | undefined,
  now: Date,
): Record<string, string> {
  if (!template) return stored.secretNames;
  const at = now.toISOString();
  const added = secretVariableNames(template)
    .filter((name) => name in stored.variables && !(name in stored.secretNames))
    .map((name) => [name, at] as const);
  return { ...stored.secretNames, ...Object.fromEntries(added) };
}

/**
 * Runs a check over variables that include secrets: a refusal names `/body/secret_variables/X`
 * for a secret X (the checks only know one map), and no secret's value reaches the problem body
 * (a compose error can quote an interpolated image or label).
 */
export function withSecretsHidden<T>(stored: StoredVariables, run: () => T, alsoHidden: string[] = []): T {
  try {
    return run();
  } catch (error) {
    const secrets = liveSecretNames(stored);
    if (!isDomainError(error) || Object.keys(secrets).length + alsoHidden.length === 0) throw error;
    // alsoHidden: the attached variable groups' secret values (docs/secrets.md#variable-groups).
    const redact = redactorOf([
      ...Object.keys(secrets).map((name) => stored.variables[name] ?? ''),
      ...alsoHidden,
    ]);
    const repath = (path: string) => {
      const name = path.startsWith('/body/variables/') ? path.slice('/body/variables/'.length) : '';
      return name in secrets ? `/body/secret_variables/${name}` : path;
    };
    const errors = error.errors?.map((e) => ({ path: repath(e.path), message: redact(e.message) }));
    throw new DomainError(error.code, redact(error.message), {
      ...(errors ? { errors } : {}),
      ...(error.headers ? { headers: error.headers } : {}),
    });
  }
}

/** Every occurrence of a value replaced by `***` (the worker's rule: values of 4+ characters). */
function redactorOf(values: string[]): (text: string) => string {
  const hidden = values.filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  return (text) => hidden.reduce((out, value) => out.split(value).join('***'), text);
}

function kindConflict(errors: FieldError[]): DomainError {
  return new DomainError('variable_kind_conflict', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
    errors,
  });
}

function pick(map: Record<string, string>, keep: (name: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([name]) => keep(name)));
}

function asMap(value: unknown): Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, string>)
    : {};
}
