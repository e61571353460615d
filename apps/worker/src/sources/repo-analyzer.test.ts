import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeRepository } from './repo-analyzer.js';
import { contextDir, readRepoFile } from './repo-files.js';

// The deterministic analyzer on throwaway directories: which layout wins, what it generates, and
// that nothing outside the checkout is ever read through a symbolic link.
const IMAGES = {
  node: 'node:20-slim',
  python: 'python:3.12-slim',
  go: 'golang:1.22',
  goRuntime: 'distroless',
  static: 'busybox:1.36',
};
const dirs: string[] = [];

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hostctl-analyzer-'));
  dirs.push(dir);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

const analyze = (dir: string, mayGenerate = true) =>
  analyzeRepository(dir, {
    mayGenerate,
    images: IMAGES,
    signal: AbortSignal.timeout(5000),
    note: async () => {},
  });

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('analyzeRepository', () => {
  it('prefers the repository’s own Dockerfile, then its compose file', async () => {
    expect(
      await analyze(await repo({ Dockerfile: 'FROM x', 'compose.yaml': '', 'package.json': '{}' })),
    ).toMatchObject({
      stack: 'dockerfile',
      dockerfile: 'Dockerfile',
      generatedFiles: [],
    });
    expect(await analyze(await repo({ 'docker-compose.yml': '', 'index.html': '' }))).toMatchObject({
      stack: 'compose',
      composeFile: 'docker-compose.yml',
    });
  });

  it.each([
    [
      { 'package.json': '{"scripts":{"start":"node s.js","build":"tsc"}}', 'package-lock.json': '{}' },
      'node',
      3000,
      ['FROM node:20-slim', 'RUN npm ci', 'RUN npm run build', 'CMD ["npm","start"]'],
    ],
    [
      { 'package.json': '{"main":"srv.js"}', 'pnpm-lock.yaml': '' },
      'node',
      3000,
      ['pnpm install --frozen-lockfile', 'CMD ["node","srv.js"]'],
    ],
    [
      { 'requirements.txt': 'flask\ngunicorn==22\n', 'app.py': '' },
      'python',
      8000,
      [
        'FROM python:3.12-slim',
        'pip install --no-cache-dir -r requirements.txt',
        '"gunicorn","--bind","0.0.0.0:8000","app:app"',
      ],
    ],
    [
      { 'pyproject.toml': '[project]\ndependencies = ["uvicorn"]\n', 'main.py': '' },
      'python',
      8000,
      ['pip install --no-cache-dir .', '"uvicorn","main:app"'],
    ],
    [
      { 'go.mod': 'module x', 'main.go': '' },
      'go',
      8080,
      ['FROM golang:1.22 AS build', 'FROM distroless', 'ENTRYPOINT ["/app"]'],
    ],
    [{ 'index.html': '<p>hi</p>' }, 'static', 8080, ['FROM busybox:1.36', 'COPY . /www', 'httpd']],
    [{ 'public/index.html': '<p>hi</p>', 'README.md': '' }, 'static', 8080, ['COPY public/ /www']],
  ])('generates a Dockerfile for %j', async (files, stack, port, fragments) => {
    const analysis = await analyze(await repo(files));
    expect(analysis).toMatchObject({
      stack,
      port,
      planner: 'deterministic',
      dockerfile: '.hostctl.Dockerfile',
    });
    for (const fragment of fragments) expect(analysis.generatedFiles[0]?.content).toContain(fragment);
    expect(analysis.reasons.length).toBeGreaterThan(0);
  });

  it('does not generate anything for git deployments, and says what is missing', async () => {
    await expect(analyze(await repo({ 'index.html': '' }), false)).rejects.toThrow(
      /no Dockerfile or compose file/,
    );
    await expect(analyze(await repo({ 'README.md': '' }))).rejects.toThrow(
      /could not work out how to deploy/,
    );
    await expect(analyze(await repo({ 'package.json': '{oops' }))).rejects.toThrow(/not valid JSON/);
  });

  it('never follows links out of the checkout', async () => {
    const outside = await repo({ 'secret.txt': 'host secret' });
    const dir = await repo({});
    await symlink(path.join(outside, 'secret.txt'), path.join(dir, 'package.json'));
    await symlink(outside, path.join(dir, 'ctx'));
    await symlink(path.join(outside, 'secret.txt'), path.join(dir, 'Dockerfile'));
    // A linked Dockerfile is not a regular file: not used; a linked manifest is refused, not read.
    await expect(analyze(dir)).rejects.toThrow(/package.json is not a regular file/);
    await expect(readRepoFile(dir, 'package.json', 1024)).rejects.toThrow(/not a regular file/);
    await expect(contextDir(dir, 'ctx')).rejects.toThrow(/outside the repository/);
    await expect(contextDir(dir, 'missing')).rejects.toThrow(/does not exist/);
  });

  it('writes its Dockerfile into the checkout even when the repository links that name elsewhere', async () => {
    const outside = await repo({ 'victim.txt': 'untouched' });
    const dir = await repo({ 'index.html': '' });
    await symlink(path.join(outside, 'victim.txt'), path.join(dir, '.hostctl.Dockerfile'));
    const analysis = await analyze(dir);
    expect(analysis.stack).toBe('static');
    expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('untouched');
    expect(await readFile(path.join(dir, '.hostctl.Dockerfile'), 'utf8')).toContain('FROM busybox:1.36');
  });
});
