import { containerLimitPolicy } from '@hostctl/compose';
import type { WorkerConfig } from '@hostctl/config';
import { sourcePolicyOf, type SourcePolicy } from '@hostctl/source-policy';
import { catalogImages, loadCatalog } from '@hostctl/templates';
import { createDockerImageBuilder } from '../adapters/docker-image-builder.js';
import { createGitClient } from '../adapters/git-client.js';
import { createLlmPlanner } from './llm-planner.js';
import type { RepositorySourceDeps } from './repository-source.js';

/**
 * The git and image policy as the API builds it (same allowlists, same platform images from the
 * same catalog), plus the endpoints only the worker knows: Caddy admin, PowerDNS, its health port.
 */
export function workerSourcePolicy(config: WorkerConfig): SourcePolicy {
  return sourcePolicyOf(
    config,
    {
      urls: [config.DATABASE_URL, config.REDIS_URL, config.CADDY_ADMIN_URL, config.PDNS_API_URL],
      localPorts: [config.WORKER_HEALTH_PORT],
    },
    // The ai analyzer's generated Dockerfiles start FROM these: operator-chosen, hence platform images.
    [...catalogImages(loadCatalog()), ...Object.values(baseImagesOf(config))],
  );
}

function baseImagesOf(config: WorkerConfig) {
  return {
    node: config.AI_BASE_IMAGE_NODE,
    python: config.AI_BASE_IMAGE_PYTHON,
    go: config.AI_BASE_IMAGE_GO,
    goRuntime: config.AI_BASE_IMAGE_GO_RUNTIME,
    static: config.AI_BASE_IMAGE_STATIC,
  };
}

/** git/ai deployment dependencies from the configuration; the LLM planner only when fully configured. */
export function createRepositorySources(
  config: WorkerConfig,
  policy: SourcePolicy = workerSourcePolicy(config),
): RepositorySourceDeps {
  const images = baseImagesOf(config);
  const hasPlanner = config.AI_PLANNER_URL !== '' && config.AI_PLANNER_MODEL !== '';
  return {
    git: createGitClient(),
    builder: createDockerImageBuilder({
      socketPath: config.DOCKER_SOCKET,
      limits: containerLimitPolicy(config),
    }),
    allowedHosts: policy.gitAllowedHosts,
    protectedEndpoints: policy.protectedEndpoints,
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
