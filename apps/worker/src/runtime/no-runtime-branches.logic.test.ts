import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Issue 28: the runtime is chosen once, in the composition root (worker-app.ts and
 * runtime/runtime-wiring.ts), and nothing else asks which one it runs on: no `swarm` branch, no
 * RUNTIME comparison, no import of one driver's internals. A module that needs something only one
 * runtime does asks the RuntimeDriver (runtime/driver.ts) for it. Swarm-only modules named
 * `swarm-*.ts` (the Swarm driver's adapters) are Swarm by name and never ask either.
 */
const SOURCE_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the runtime may be named: the drivers, the composition root, tests and their fixtures. */
function isExempt(path: string): boolean {
  const name = path.split('/').at(-1) ?? '';
  return (
    path.startsWith('runtime/') ||
    path === 'worker-app.ts' ||
    path.startsWith('testing/') ||
    name.endsWith('.test.ts') ||
    name.endsWith('.d.ts') ||
    name.startsWith('swarm-')
  );
}

const RULES: { why: string; pattern: RegExp }[] = [
  { why: 'compares RUNTIME', pattern: /\bRUNTIME\b\s*[!=]==|[!=]==\s*\w*\.?RUNTIME\b/ },
  { why: 'compares with a runtime name', pattern: /[!=]==\s*['"](swarm|docker)['"]/ },
  { why: 'branches on a swarm flag', pattern: /\bis_?[sS]warm\w*/ },
  { why: 'branches on a swarm value', pattern: /\bif\s*\([^)]*\b\w*[sS]warm\w*/ },
  // A ternary, && or || on it, or an optional swarm dependency (`swarm?:`), but not `swarm?.x`.
  { why: 'branches on a swarm value', pattern: /\b\w*[sS]warm\w*\s*(\?(?!\.)|&&|\|\|)/ },
  { why: 'imports a driver', pattern: /from\s+['"][^'"]*runtime\/(swarm|docker)\// },
];

/** The rule each offending line breaks, with its line number; comments are not code. */
function runtimeBranches(source: string): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|\s)\/\/.*$/gm, '$1');
  const found: string[] = [];
  code.split('\n').forEach((line, index) => {
    const rule = RULES.find(({ pattern }) => pattern.test(line));
    if (rule) found.push(`${index + 1}: ${rule.why}: ${line.trim()}`);
  });
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the runtime is chosen once', () => {
  it('no module outside the drivers and the composition root asks which runtime it runs on', () => {
    const files = sourceFiles(SOURCE_ROOT)
      .map((path) => relative(SOURCE_ROOT, path))
      .filter((path) => !isExempt(path));
    // It reads the worker's modules (a wrong root would find nothing and pass).
    expect(files).toContain('pipeline/deploy-pipeline.ts');
    expect(files.length).toBeGreaterThan(100);
    const offences = files.flatMap((path) =>
      runtimeBranches(readFileSync(join(SOURCE_ROOT, path), 'utf8')).map((line) => `${path}:${line}`),
    );
    expect(offences).toEqual([]);
  });

  it('finds the branches it forbids, and not what merely names Swarm in a comment or a call', () => {
    const planted = [
      'if (deps.swarm) return runOnSwarm(deps, deps.swarm, run);',
      "  const isSwarmGuarded = config.EGRESS_POLICY === 'enforce';",
      "const nodes = config.RUNTIME === 'swarm' ? parse(value) : new Map();",
      '  swarm?: Pick<ServiceRuntime, "tearDown">;',
      '  ...(swarm ? { swarm } : {}),',
      "import { createSwarmDriver } from '../runtime/swarm/swarm-driver.js';",
      "if (kind === 'docker') return;",
    ];
    for (const line of planted) expect(runtimeBranches(line), line).toHaveLength(1);
    const allowed = [
      '// RUNTIME=swarm: the route follows the tasks (if swarm ? yes : no)',
      '/** Under RUNTIME=swarm, deps.swarm && more */',
      'const gateway = async () => [await swarmGatewayBridge(node.socketPath)];',
      "import type { RuntimeDriver } from '../runtime/driver.js';",
    ];
    for (const line of allowed) expect(runtimeBranches(line), line).toEqual([]);
  });
});
