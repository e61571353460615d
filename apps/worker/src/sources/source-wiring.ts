import { containerLimitPolicy } from '@hostctl/compose';
import type { WorkerConfig } from '@hostctl/config';
import { parseAllowedHosts } from '@hostctl/source-policy';
import { createDockerImageBuilder } from '../adapters/docker-image-builder.js';
import { createGitClient } from '../adapters/git-client.js';
import { createLlmPlanner } from './llm-planner.js';
import type { RepositorySourceDeps } from './repository-source.js';

/** git/ai deployment dependencies from the configuration; the LLM planner only when fully configured. */
export function createRepositorySources(config: WorkerConfig): RepositorySourceDeps {
  const images = {
    node: config.AI_BASE_IMAGE_NODE,
    python: config.AI_BASE_IMAGE_PYTHON,
    go: config.AI_BASE_IMAGE_GO,
    goRuntime: config.AI_BASE_IMAGE_GO_RUNTIME,
    static: config.AI_BASE_IMAGE_STATIC,
  };
  const hasPlanner = config.AI_PLANNER_URL !== '' && config.AI_PLANNER_MODEL !== '';
  return {
    git: createGitClient(),
    builder: createDockerImageBuilder({
      socketPath: config.DOCKER_SOCKET,
      limits: containerLimitPolicy(config),
    }),
    allowedHosts: parseAllowedHosts(config.GIT_ALLOWED_HOSTS),
    cloneTimeoutMs: config.GIT_CLONE_TIMEOUT_MS,
    maxRepoBytes: config.GIT_MAX_REPO_MB * 1024 * 1024,
    images,
    containerLimits: containerLimitPolicy(config),
    ...(hasPlanner
      ? {
          planner: createLlmPlanner({
            url: config.AI_PLANNER_URL,
            model: config.AI_PLANNER_MODEL,
            apiKey: config.AI_PLANNER_API_KEY,
            timeoutMs: config.AI_PLANNER_TIMEOUT_MS,
            allowedImages: Object.values(images),
          }),
        }
      : {}),
  };
}
