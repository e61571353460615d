import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Expand-then-contract (CONTRIBUTING.md#migrations): during a rolling upgrade the previous
 * release's API and workers run against the new schema, so a migration may add but not take away
 * what that release reads or writes. A statement that would break it is allowed only in a contract
 * migration, which removes what the previous release no longer uses and says so with a line
 * `-- contract: <why the previous release does not need it>`.
 */
export const CONTRACT_MARKER = /^\s*--\s*contract:\s*\S/im;

const DESTRUCTIVE: { pattern: RegExp; why: string }[] = [
  { pattern: /\bDROP\s+(TABLE|VIEW|TYPE|SCHEMA)\b/i, why: 'drops a table, view, type or schema' },
  { pattern: /\bDROP\s+COLUMN\b/i, why: 'drops a column' },
  { pattern: /\bRENAME\b/i, why: 'renames (the previous release still uses the old name)' },
  { pattern: /\bALTER\s+COLUMN\s+"?\w+"?\s+(SET\s+DATA\s+)?TYPE\b/i, why: "changes a column's type" },
  { pattern: /\bSET\s+NOT\s+NULL\b/i, why: 'makes a column the previous release may leave empty required' },
  { pattern: /^TRUNCATE\b/i, why: 'empties a table' },
  {
    pattern: /\bADD\s+CONSTRAINT\s+"?\w+"?\s+CHECK\b/i,
    why: 'adds a check the previous release may not meet',
  },
];

/**
 * Migrations whose flagged statements were reviewed and are safe for a rolling upgrade, with why.
 * For a migration that may already be applied somewhere: a marker comment would change its
 * checksum, which the migrator refuses (packages/db/src/migrator.ts).
 */
const REVIEWED: Record<string, string> = {
  '20261129002000_exec_sessions':
    "widens api_keys_actions_vocabulary by 'exec': every action the previous release writes still passes",
};

/** `ADD COLUMN … NOT NULL` with no DEFAULT: the previous release's inserts do not name it. */
const REQUIRED_WITHOUT_DEFAULT =
  /\bADD\s+COLUMN\b(?:(?!\bDEFAULT\b)[^,])*\bNOT\s+NULL\b(?:(?!\bDEFAULT\b)[^,])*$/i;

interface GuardProblem {
  migration: string;
  statement: string;
  why: string;
}

/** SQL without its `--` comments, split into statements and ALTER TABLE clauses. */
function clauses(sql: string): string[] {
  return sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .flatMap((statement) => statement.split(/,\s*(?=(?:ADD|DROP|ALTER|RENAME)\b)/i))
    .map((clause) => clause.replace(/\s+/g, ' ').trim())
    .filter((clause) => clause !== '');
}

export function destructiveStatements(migration: string, sql: string): GuardProblem[] {
  if (CONTRACT_MARKER.test(sql) || migration in REVIEWED) return [];
  const problems: GuardProblem[] = [];
  for (const clause of clauses(sql)) {
    const found = DESTRUCTIVE.find(({ pattern }) => pattern.test(clause));
    if (found) problems.push({ migration, statement: clause, why: found.why });
    else if (REQUIRED_WITHOUT_DEFAULT.test(clause))
      problems.push({ migration, statement: clause, why: 'adds a required column with no default' });
  }
  return problems;
}

/** Every migration in `dir` that `released` (the previous release's migrations) does not have. */
export async function checkNewMigrations(dir: string, released: string[]): Promise<GuardProblem[]> {
  const known = new Set(released);
  const added = (await readdir(dir)).filter((name) => /^\d{14}_/.test(name) && !known.has(name)).sort();
  const problems: GuardProblem[] = [];
  for (const name of added)
    problems.push(
      ...destructiveStatements(name, await readFile(path.join(dir, name, 'migration.sql'), 'utf8')),
    );
  return problems;
}
