// The CLI calls the API through @hostctl/api-client, whose types are generated from the API's
// OpenAPI document, so an API change the CLI does not follow must fail `pnpm typecheck` (the first
// step of `pnpm check`), not a pipeline at run time. This plants such changes in a copy of the
// package (a renamed path, response field, query parameter and request body fields, a field of
// another type), points the CLI's sources at the copy and runs tsc with the workspace's compiler
// options: every change must be reported in the CLI file that depends on it. A control run on the
// unchanged copy must pass, so the errors come from the plants and not from the setup.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './workspace-files.js';

const run = promisify(execFile);
const PACKAGE = path.join(ROOT, 'packages/api-client');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

interface Plant {
  /** The operation (or `paths`) whose block holds the text; the first match in it is changed. */
  block: string;
  from: string;
  to: string;
  /** The CLI file that must report it, and a word of the error that names what changed. */
  file: string;
  reported: string;
}

const PLANTS: Plant[] = [
  {
    block: 'paths',
    from: '"/api/runs/{id}": {',
    to: '"/api/job-runs/{id}": {',
    file: 'apps/cli/src/commands/run.commands.ts',
    reported: '/api/runs/{id}',
  },
  {
    block: 'postServicesByIdRedeploy',
    from: 'deploy_job_id: string;',
    to: 'deployment_job_id: string;',
    file: 'apps/cli/src/commands/deploy.commands.ts',
    reported: 'deploy_job_id',
  },
  {
    block: 'postServicesByIdRollback',
    from: 'deployment_id?: string;',
    to: 'target_deployment_id?: string;',
    file: 'apps/cli/src/commands/deploy.commands.ts',
    reported: 'deployment_id',
  },
  {
    block: 'postServices',
    from: 'git_branch?: string;',
    to: 'branch?: string;',
    file: 'apps/cli/src/commands/services.commands.ts',
    reported: 'git_branch',
  },
  {
    block: 'getDeploymentsById',
    from: 'after_seq?: number;',
    to: 'after?: number;',
    file: 'apps/cli/src/client/wait-deployment.ts',
    reported: 'after_seq',
  },
  {
    block: 'getServices',
    from: 'total: number;',
    to: 'total: string;',
    file: 'apps/cli/src/client/resolve-service.ts',
    reported: 'string',
  },
];

/** The package's sources as generated (the control) and with PLANTS applied. */
const copies = { control: '', planted: '' };
const results: Partial<Record<keyof typeof copies, { code: number; errors: string[] }>> = {};

/** Changes the first `from` inside `block` (an operation or the paths interface) of the schema. */
function plant(schema: string, { block, from, to }: Plant): string {
  const start = schema.indexOf(block === 'paths' ? 'export interface paths {' : `\n    ${block}: {\n`);
  if (start < 0) throw new Error(`no ${block} in the schema`);
  const at = schema.indexOf(from, start);
  const next = block === 'paths' ? schema.indexOf('\n}\n', start) : schema.indexOf('\n    };\n', start);
  if (at < 0 || at > next) throw new Error(`no ${from} in ${block}: update this test to the schema`);
  return schema.slice(0, at) + to + schema.slice(at + from.length);
}

/** tsc over the CLI's sources with @hostctl/api-client resolved to `copy`; its exit code and errors. */
async function typecheckCli(copy: string): Promise<{ code: number; errors: string[] }> {
  try {
    await run(process.execPath, [TSC, '-p', copy], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, errors: [] };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    const errors = (failed.stdout ?? '').split('\n').filter((line) => /error TS\d+/.test(line));
    return { code: typeof failed.code === 'number' ? failed.code : 1, errors };
  }
}

/** A copy of the package's sources with a tsconfig that points the CLI's imports at it. */
async function packageCopy(): Promise<string> {
  // Inside the package's node_modules: ignored by git, and openapi-fetch resolves from there.
  const copy = await mkdtemp(path.join(PACKAGE, 'node_modules/.planted-'));
  await cp(path.join(PACKAGE, 'src'), path.join(copy, 'src'), { recursive: true });
  const tsconfig = {
    extends: path.join(ROOT, 'tsconfig.base.json'),
    compilerOptions: { paths: { '@hostctl/api-client': ['./src/index.ts'] } },
    include: [path.join(ROOT, 'apps/cli/src')],
    exclude: [path.join(ROOT, 'apps/cli/src/**/*.test.ts')],
  };
  await writeFile(path.join(copy, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  return copy;
}

beforeAll(async () => {
  copies.control = await packageCopy();
  copies.planted = await packageCopy();
  const schemaFile = path.join(copies.planted, 'src/schema.d.ts');
  await writeFile(schemaFile, PLANTS.reduce(plant, await readFile(schemaFile, 'utf8')));
  // The two programs at once: each is one tsc process, and this file waits for both.
  [results.control, results.planted] = await Promise.all([
    typecheckCli(copies.control),
    typecheckCli(copies.planted),
  ]);
});

afterAll(async () => {
  for (const copy of Object.values(copies)) if (copy) await rm(copy, { recursive: true, force: true });
});

describe('the CLI against its API client', () => {
  it('typechecks against the schema as generated (the control)', () => {
    expect(results.control?.errors).toEqual([]);
    expect(results.control?.code).toBe(0);
  });

  it('fails to typecheck, in the file concerned, for every planted schema change', () => {
    const result = results.planted!;
    expect(result.code).not.toBe(0);
    for (const { file, reported } of PLANTS) {
      const inFile = result.errors.filter((line) => line.startsWith(`${file}(`));
      expect(
        inFile.some((line) => line.includes(reported)),
        `${file}: ${reported}`,
      ).toBe(true);
    }
  });
});
