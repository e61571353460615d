/**
 * Optional LLM deploy planner behind an OpenAI-compatible chat completions endpoint
 * (AI_PLANNER_URL/MODEL/API_KEY). It only proposes a Dockerfile for repositories that bring none;
 * the answer must match a strict JSON schema, use only the configured base images and stay
 * small, and any failure (network, timeout, refusal, malformed answer) makes the caller fall back
 * to the deterministic analyzer. It never runs anything itself: the Dockerfile is built like a
 * tenant's own, with the same isolation.
 */
export interface LlmPlannerConfig {
  url: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
  /** FROM lines may only name these images (the configured AI_BASE_IMAGE_* values). */
  allowedImages: string[];
}

export interface PlannerInput {
  files: string[];
  /** Manifest files (package.json, requirements.txt, …), truncated. */
  manifests: Record<string, string>;
}

export interface PlannerAnswer {
  stack: string;
  port: number;
  dockerfile: string;
  reasons: string[];
}

export interface LlmPlanner {
  plan(input: PlannerInput, signal: AbortSignal): Promise<PlannerAnswer>;
}

export const PLANNER_ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['stack', 'port', 'dockerfile', 'reasons'],
  properties: {
    stack: { type: 'string', enum: ['node', 'python', 'go', 'static', 'other'] },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    dockerfile: { type: 'string' },
    reasons: { type: 'array', items: { type: 'string' } },
  },
} as const;

const MAX_DOCKERFILE = 16 * 1024;
const MAX_RESPONSE = 1024 * 1024;

export function createLlmPlanner(config: LlmPlannerConfig, fetchImpl: typeof fetch = fetch): LlmPlanner {
  const endpoint = `${config.url.replace(/\/+$/, '')}/chat/completions`;
  return {
    async plan(input, signal) {
      const response = await fetchImpl(endpoint, {
        method: 'POST',
        signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
        headers: {
          'content-type': 'application/json',
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: config.model,
          temperature: 0,
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'deploy_plan', strict: true, schema: PLANNER_ANSWER_SCHEMA },
          },
          messages: [
            { role: 'system', content: systemPrompt(config.allowedImages) },
            { role: 'user', content: JSON.stringify(input) },
          ],
        }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`planner answered HTTP ${response.status}`);
      if (text.length > MAX_RESPONSE) throw new Error('planner answer is too large');
      const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]
        ?.message?.content;
      if (typeof content !== 'string') throw new Error('planner answer has no message content');
      return validateAnswer(JSON.parse(content), config.allowedImages);
    },
  };
}

function systemPrompt(images: string[]): string {
  return [
    'You plan how to deploy a source repository as one container that serves HTTP.',
    'Answer only with JSON matching the given schema: the detected stack, the TCP port the app listens on,',
    'a complete Dockerfile for the classic Docker builder, and short reasons.',
    `Every FROM line must use one of these images exactly: ${images.join(', ')}.`,
    'No "# syntax" directive, no secrets, no network access at runtime beyond installing dependencies.',
  ].join(' ');
}

/** Strict check of the answer: exact keys and types, bounded sizes, allowed base images only. */
export function validateAnswer(value: unknown, allowedImages: string[]): PlannerAnswer {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('answer is not an object');
  const answer = value as Record<string, unknown>;
  const keys = Object.keys(answer).sort().join(',');
  if (keys !== 'dockerfile,port,reasons,stack') throw new Error(`answer has keys ${keys}`);
  const { stack, port, dockerfile, reasons } = answer;
  if (typeof stack !== 'string' || !PLANNER_ANSWER_SCHEMA.properties.stack.enum.includes(stack as never))
    throw new Error('answer.stack is not one of the allowed stacks');
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error('answer.port is not a TCP port');
  if (
    !Array.isArray(reasons) ||
    reasons.length > 20 ||
    !reasons.every((r) => typeof r === 'string' && r.length <= 500)
  )
    throw new Error('answer.reasons must be up to 20 short strings');
  if (typeof dockerfile !== 'string' || dockerfile.length === 0 || dockerfile.length > MAX_DOCKERFILE)
    throw new Error('answer.dockerfile is empty or too large');
  if (/^\s*#\s*syntax\s*=/im.test(dockerfile)) throw new Error('answer.dockerfile has a # syntax directive');
  const stages = new Set<string>();
  const froms = [...dockerfile.matchAll(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$/gim)];
  if (froms.length === 0) throw new Error('answer.dockerfile has no FROM line');
  for (const [, image = '', stage] of froms) {
    if (!allowedImages.includes(image) && !stages.has(image.toLowerCase()))
      throw new Error(`answer.dockerfile uses base image ${image}, which is not configured`);
    if (stage) stages.add(stage.toLowerCase());
  }
  return {
    stack,
    port,
    dockerfile: dockerfile.endsWith('\n') ? dockerfile : `${dockerfile}\n`,
    reasons: reasons as string[],
  };
}
