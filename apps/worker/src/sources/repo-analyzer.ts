import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  GENERATED_DOCKERFILE,
  goDockerfile,
  nodeDockerfile,
  pythonDockerfile,
  staticDockerfile,
  type BaseImages,
  type GeneratedDockerfile,
} from './dockerfile-templates.js';
import type { LlmPlanner } from './llm-planner.js';
import { RepositoryContentError, isRegularFile, readRepoFile, topLevelNames } from './repo-files.js';

/**
 * Works out how to deploy a checked-out repository, deterministically: its own Dockerfile first,
 * then its compose file; for ai deployments only, a detected stack (package.json → Node,
 * requirements.txt/pyproject.toml → Python, go.mod → Go, index.html → static site) gets a
 * generated Dockerfile. The result is stored on the deployment, so a person can review why it
 * was deployed the way it was. The LLM planner, when configured, is asked before the stack
 * detection; any failure of it falls back to the detection.
 */
export type Stack = 'dockerfile' | 'compose' | 'node' | 'python' | 'go' | 'static' | 'other';

export interface Analysis {
  stack: Stack;
  planner: 'deterministic' | 'llm';
  reasons: string[];
  generatedFiles: { path: string; content: string }[];
  /** Dockerfile to build (relative to the repository root), unless a compose file is used. */
  dockerfile?: string;
  composeFile?: string;
  /** Port the generated Dockerfile listens on. */
  port?: number;
}

export interface AnalyzeOptions {
  /** git deploys only use what the repository brings; ai deploys may generate a Dockerfile. */
  mayGenerate: boolean;
  images: BaseImages;
  planner?: LlmPlanner;
  signal: AbortSignal;
  note(message: string): Promise<void>;
}

export const COMPOSE_FILES = ['compose.yaml', 'compose.yml', 'docker-compose.yaml', 'docker-compose.yml'];
const STATIC_ROOTS = ['.', 'public', 'dist', 'build', 'site'];
const MANIFEST_LIMIT = 64 * 1024;

export async function analyzeRepository(root: string, options: AnalyzeOptions): Promise<Analysis> {
  if (await isRegularFile(root, 'Dockerfile'))
    return base('dockerfile', ['Dockerfile at the repository root: built as is'], {
      dockerfile: 'Dockerfile',
    });
  for (const file of COMPOSE_FILES) {
    if (await isRegularFile(root, file))
      return base('compose', [`${file} at the repository root: deployed as a compose project`], {
        composeFile: file,
      });
  }
  if (!options.mayGenerate)
    throw new RepositoryContentError(
      `the repository has no Dockerfile or compose file (${COMPOSE_FILES.join(', ')}) at its root`,
    );
  const files = new Set(await topLevelNames(root));
  if (options.planner) {
    const planned = await askPlanner(root, files, options);
    if (planned) return write(root, planned);
  }
  const detected = await detectStack(root, files, options.images);
  if (!detected)
    throw new RepositoryContentError(
      'could not work out how to deploy the repository: no Dockerfile, compose file, package.json, requirements.txt, pyproject.toml, go.mod or index.html',
    );
  return write(root, detected);
}

function base(stack: Stack, reasons: string[], extra: Partial<Analysis>): Analysis {
  return { stack, planner: 'deterministic', reasons, generatedFiles: [], ...extra };
}

async function write(root: string, found: Analysis & { content: string }): Promise<Analysis> {
  const { content, ...analysis } = found;
  // The repository may hold a link under this name (to /etc/…): remove it, then create exclusively,
  // which never follows a link.
  const target = path.join(root, GENERATED_DOCKERFILE);
  await rm(target, { force: true, recursive: true });
  await writeFile(target, content, { flag: 'wx' });
  return {
    ...analysis,
    dockerfile: GENERATED_DOCKERFILE,
    generatedFiles: [{ path: GENERATED_DOCKERFILE, content }],
  };
}

async function detectStack(
  root: string,
  files: Set<string>,
  images: BaseImages,
): Promise<(Analysis & { content: string }) | null> {
  const generated = (stack: Stack, result: GeneratedDockerfile) => ({
    ...base(stack, result.reasons, { port: result.port }),
    content: result.content,
  });
  if (files.has('package.json')) {
    const text = await readRepoFile(root, 'package.json', MANIFEST_LIMIT);
    let pkg: { scripts?: Record<string, unknown>; main?: unknown };
    try {
      pkg = JSON.parse(text) as typeof pkg;
    } catch {
      throw new RepositoryContentError('package.json is not valid JSON');
    }
    return generated('node', nodeDockerfile(images.node, pkg ?? {}, files));
  }
  for (const file of ['requirements.txt', 'pyproject.toml'] as const) {
    if (files.has(file)) {
      const text = await readRepoFile(root, file, MANIFEST_LIMIT);
      return generated('python', pythonDockerfile(images.python, { file, text }, files));
    }
  }
  if (files.has('go.mod')) return generated('go', goDockerfile(images));
  for (const dir of STATIC_ROOTS) {
    if (await isRegularFile(root, path.join(dir, 'index.html')))
      return generated('static', staticDockerfile(images.static, dir));
  }
  return null;
}

async function askPlanner(
  root: string,
  files: Set<string>,
  options: AnalyzeOptions,
): Promise<(Analysis & { content: string }) | null> {
  const manifests: Record<string, string> = {};
  for (const file of ['package.json', 'requirements.txt', 'pyproject.toml', 'go.mod']) {
    if (!(await isRegularFile(root, file))) continue;
    manifests[file] = (await readRepoFile(root, file, MANIFEST_LIMIT)).slice(0, 8192);
  }
  try {
    const answer = await options.planner!.plan(
      { files: [...files].slice(0, 200), manifests },
      options.signal,
    );
    await options.note(`LLM planner proposed a ${answer.stack} deployment on port ${answer.port}`);
    return {
      ...base(answer.stack as Stack, answer.reasons, { port: answer.port }),
      planner: 'llm',
      content: answer.dockerfile,
    };
  } catch (error) {
    options.signal.throwIfAborted();
    await options.note(
      `LLM planner unavailable (${error instanceof Error ? error.message : String(error)}); using the deterministic analyzer`,
    );
    return null;
  }
}
