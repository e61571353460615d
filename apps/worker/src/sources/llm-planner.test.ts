import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmPlanner, validateAnswer, type LlmPlannerConfig } from './llm-planner.js';
import { analyzeRepository } from './repo-analyzer.js';

// The planner client against a tiny OpenAI-compatible stub on loopback: what it sends, what it
// accepts, and that every kind of bad answer makes the analyzer fall back to its own rules.
type Reply = { status?: number; body?: unknown; delayMs?: number };
let reply: Reply = {};
const requests: { auth?: string; body: Record<string, unknown> }[] = [];
let server: http.Server;
let config: LlmPlannerConfig;

const IMAGES = {
  node: 'node:20-slim',
  python: 'python:3.12-slim',
  go: 'golang:1.22',
  goRuntime: 'distroless',
  static: 'busybox:1.36',
};
const GOOD = {
  stack: 'node',
  port: 8080,
  dockerfile: 'FROM node:20-slim AS deps\nRUN npm ci\nFROM deps\nCMD ["node", "server.js"]',
  reasons: ['package.json has a start script'],
};
const completion = (content: unknown) => ({
  choices: [
    {
      message: {
        role: 'assistant',
        content: typeof content === 'string' ? content : JSON.stringify(content),
      },
    },
  ],
});

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      requests.push({
        auth: request.headers.authorization,
        body: JSON.parse(text) as Record<string, unknown>,
      });
      setTimeout(() => {
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        response.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  config = {
    url: `http://127.0.0.1:${port}/v1/`,
    model: 'test-model',
    apiKey: 'sk-test',
    // Generous: a loaded test machine once took over 500 ms for the first answer from loopback
    // (the happy path failed on the planner's own timeout). The timeout case sets its own.
    timeoutMs: 10_000,
    allowedImages: Object.values(IMAGES),
  };
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

const input = { files: ['package.json', 'server.js'], manifests: { 'package.json': '{"name":"x"}' } };

describe('LLM planner client', () => {
  it('asks for a strict JSON-schema answer and returns the validated plan', async () => {
    reply = { body: completion(GOOD) };
    const answer = await createLlmPlanner(config).plan(input, AbortSignal.timeout(15_000));
    expect(answer).toEqual({ ...GOOD, dockerfile: `${GOOD.dockerfile}\n` });
    const sent = requests.at(-1)!;
    expect(sent.auth).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({
      model: 'test-model',
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'deploy_plan', strict: true } },
    });
    expect(JSON.stringify(sent.body.messages)).toContain('busybox:1.36');
  });

  it.each<[string, Reply, RegExp]>([
    ['an HTTP error', { status: 500, body: { error: 'boom' } }, /HTTP 500/],
    ['a body that is not JSON', { body: 'not json' }, /JSON/],
    ['no message content', { body: { choices: [] } }, /no message content/],
    ['content that is not JSON', { body: completion('sure! here is a Dockerfile') }, /JSON/],
    ['an extra key', { body: completion({ ...GOOD, shell: 'rm -rf /' }) }, /keys/],
    ['a missing key', { body: completion({ ...GOOD, port: undefined }) }, /keys/],
    ['a port out of range', { body: completion({ ...GOOD, port: 70000 }) }, /port/],
    ['an unknown stack', { body: completion({ ...GOOD, stack: 'cobol' }) }, /stack/],
    [
      'an unconfigured base image',
      { body: completion({ ...GOOD, dockerfile: 'FROM evil/miner:latest\n' }) },
      /evil\/miner/,
    ],
    [
      'a syntax directive',
      { body: completion({ ...GOOD, dockerfile: '# syntax=docker/dockerfile:1\nFROM node:20-slim\n' }) },
      /syntax/,
    ],
    ['no answer in time', { body: completion(GOOD), delayMs: 1500 }, /abort|timeout/i],
  ])('refuses %s', async (_label, next, reason) => {
    reply = next;
    const planner = createLlmPlanner(next.delayMs ? { ...config, timeoutMs: 500 } : config);
    await expect(planner.plan(input, AbortSignal.timeout(15_000))).rejects.toThrow(reason);
  });

  it('validates without the network too', () => {
    expect(() => validateAnswer([], [])).toThrow(/not an object/);
    expect(() => validateAnswer({ ...GOOD, dockerfile: 'RUN true' }, IMAGES.node.split(','))).toThrow(
      /no FROM/,
    );
  });
});

describe('analyzer with a planner', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'hostctl-analyzer-'));
    await writeFile(
      path.join(repo, 'package.json'),
      JSON.stringify({ scripts: { start: 'node server.js' } }),
    );
  });
  afterAll(async () => rm(repo, { recursive: true, force: true }));

  const analyze = (notes: string[]) =>
    analyzeRepository(repo, {
      mayGenerate: true,
      images: IMAGES,
      planner: createLlmPlanner(config),
      signal: AbortSignal.timeout(5000),
      note: async (message) => void notes.push(message),
    });

  it('uses a valid answer and records it as the LLM planner’s', async () => {
    reply = { body: completion(GOOD) };
    const notes: string[] = [];
    const analysis = await analyze(notes);
    expect(analysis).toMatchObject({
      planner: 'llm',
      stack: 'node',
      port: 8080,
      dockerfile: '.hostctl.Dockerfile',
    });
    expect(analysis.generatedFiles[0]?.content).toContain('FROM node:20-slim AS deps');
    expect(notes).toEqual(['LLM planner proposed a node deployment on port 8080']);
  });

  it('falls back to the deterministic analyzer when the planner fails', async () => {
    reply = { body: completion({ ...GOOD, dockerfile: 'FROM evil/miner\n' }) };
    const notes: string[] = [];
    const analysis = await analyze(notes);
    expect(analysis).toMatchObject({ planner: 'deterministic', stack: 'node', port: 3000 });
    expect(analysis.generatedFiles[0]?.content).toContain('CMD ["npm","start"]');
    expect(notes[0]).toMatch(/LLM planner unavailable .*evil\/miner.*; using the deterministic analyzer/);
  });
});
