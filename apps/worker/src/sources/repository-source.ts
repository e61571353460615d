import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseCompose, type ContainerLimitPolicy, type Plan } from '@hostctl/compose';
import { environmentOf, type WorkerDeploymentStore, type WorkerService } from '@hostctl/db';
import {
  checkBranch,
  checkGitUrl,
  isIpLiteral,
  resolveAndCheckHost,
  type AllowedHost,
  type Endpoint,
  type Lookup,
} from '@hostctl/source-policy';
import { GitSourceError, type GitClient, type GitFetchOptions } from '../adapters/git-client.js';
import type { ImageBuilder } from '../adapters/image-builder.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { assertImageAllowed, type ImageGuard } from '../pipeline/image-guard.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { buildPlanImages } from './build-images.js';
import type { BaseImages } from './dockerfile-templates.js';
import type { LlmPlanner } from './llm-planner.js';
import { analyzeRepository, type Analysis } from './repo-analyzer.js';
import { RepositoryContentError, readRepoFile, treeBytes } from './repo-files.js';

/**
 * The `source` and `build` steps of git and ai deployments: check the URL again (the worker's own
 * allowlist; the API checked it at create time), resolve the host and refuse internal targets,
 * resolve the branch head with ls-remote (so a redeploy always gets the newest commit), shallow
 * clone it (or the commit a push webhook pinned, when that moves the service forward on its
 * branch) within time and size bounds, work out what to build, build it, and delete the checkout. The plan that comes out names only images, like any other deploy method's.
 */
export interface RepositorySourceDeps {
  git: GitClient;
  builder: ImageBuilder;
  /** GIT_ALLOWED_HOSTS, parsed (host and port). */
  allowedHosts: AllowedHost[];
  /** The control plane's endpoints: never a clone target, allowlisted or not. */
  protectedEndpoints: Endpoint[];
  cloneTimeoutMs: number;
  maxRepoBytes: number;
  images: BaseImages;
  /** CONTAINER_* settings for the plan's containers; the built-in defaults when absent. */
  containerLimits?: ContainerLimitPolicy;
  planner?: LlmPlanner;
  /** Tests inject a resolver; production uses the system's, like git. */
  lookup?: Lookup;
  workDir?: string;
}

export interface RepositoryRun {
  deploymentId: string;
  /** Check out exactly this commit (a push webhook's), not the branch's head. */
  requestedCommit?: string | null;
  /** The commit of the release that runs now: a pinned commit must be the head or descend from it. */
  runningCommit?: string | null;
  service: WorkerService;
  store: Pick<WorkerDeploymentStore, 'recordCommit' | 'recordBuildTime'>;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint(step: 'source' | 'build'): Promise<void>;
  /** The repository's own compose file names images too: checked before anything is built. */
  images: ImageGuard;
}

export interface RepositoryPlan {
  plan: Plan;
  /** What the deployment stores: the plan plus how it was arrived at (reviewable). */
  stored: Plan & { source: Record<string, unknown> };
}

const COMPOSE_LIMIT = 256 * 1024;

export async function planFromRepository(
  deps: RepositorySourceDeps,
  run: RepositoryRun,
): Promise<RepositoryPlan> {
  await run.checkpoint('source');
  const { service, log } = run;
  const url = (service.deployMethod === 'git' ? service.gitUrl : service.aiUrl) ?? '';
  const fetchOptions = await checkedFetchOptions(deps, url, service.gitBranch ?? undefined, run.signal);
  const workDir = await mkdtemp(path.join(deps.workDir ?? os.tmpdir(), 'hostctl-src-'));
  try {
    const resolved = await git(deps, run, fetchOptions, () =>
      deps.git.resolveBranch(url, service.gitBranch ?? undefined, fetchOptions),
    );
    await log.info(`Resolved ${url} ${resolved.branch} to ${resolved.commit}`);
    const checkout = path.join(workDir, 'repo');
    const pinned = run.requestedCommit ?? undefined;
    if (pinned) await log.info(`Pinned to commit ${pinned} by the request`);
    const commit = await git(deps, run, fetchOptions, () =>
      deps.git.clone(url, checkout, resolved.branch, {
        ...fetchOptions,
        maxPackBytes: deps.maxRepoBytes,
        ...(pinned ? { commit: pinned, runningCommit: run.runningCommit ?? null } : {}),
      }),
    );
    if ((await treeBytes(checkout, deps.maxRepoBytes)) > deps.maxRepoBytes)
      throw new PermanentStepError(
        `the repository is larger than ${Math.round(deps.maxRepoBytes / 1048576)} MB`,
      );
    await run.store.recordCommit(run.deploymentId, commit);
    await log.info(`Checked out ${commit}`);

    const analysis = await content(() =>
      analyzeRepository(checkout, {
        mayGenerate: service.deployMethod === 'ai',
        images: deps.images,
        ...(deps.planner ? { planner: deps.planner } : {}),
        signal: run.signal,
        note: (message) => log.info(message),
      }),
    );
    for (const reason of analysis.reasons) await log.info(`Analysis: ${reason}`);
    const draft = await content(() =>
      draftPlan(checkout, analysis, environmentOf(service), deps.containerLimits),
    );
    for (const container of draft.containers)
      if (!container.build && container.image) await assertImageAllowed(run.images, container.image);

    await run.checkpoint('build');
    const buildStarted = performance.now();
    let plan: Plan;
    try {
      plan = await buildPlanImages(
        {
          builder: deps.builder,
          serviceId: service.id,
          commit,
          checkout,
          log,
          signal: run.signal,
          images: run.images,
        },
        draft,
      );
    } finally {
      // Succeeded or failed, the build took the customer's time (build_minutes_per_day).
      await run.store.recordBuildTime(run.deploymentId, performance.now() - buildStarted);
    }
    const source = { url, branch: resolved.branch, commit, analysis };
    return { plan, stored: { ...plan, source } };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function checkedFetchOptions(
  deps: RepositorySourceDeps,
  url: string,
  branch: string | undefined,
  signal: AbortSignal,
): Promise<GitFetchOptions> {
  const verdict = checkGitUrl(url, {
    allowedHosts: deps.allowedHosts,
    protectedEndpoints: deps.protectedEndpoints,
  });
  if (!verdict.ok) throw new PermanentStepError(`repository URL refused: it ${verdict.reason}`);
  if (branch !== undefined) {
    const branchVerdict = checkBranch(branch);
    if (!branchVerdict.ok) throw new PermanentStepError(`branch refused: it ${branchVerdict.reason}`);
  }
  const target = verdict.url;
  const host = await resolveAndCheckHost(
    target.host,
    target.isAllowlisted,
    deps.lookup ? { lookup: deps.lookup } : {},
  );
  if (!host.ok) throw new PermanentStepError(`repository URL refused: ${host.reason}`);
  return {
    signal: AbortSignal.any([signal, AbortSignal.timeout(deps.cloneTimeoutMs)]),
    protocols: [target.scheme],
    ...pinnedConnection(target, host.resolved.addresses),
  };
}

/**
 * git connects only to the addresses that passed the check, whatever a second DNS answer says
 * (DNS rebinding): https through curl's resolve list, ssh through HostName. Hosts given as an
 * address need nothing, and allowlisted hosts (the only ones http:// and git:// may name) are the
 * operator's own and are not resolved by the check at all.
 */
function pinnedConnection(
  target: { scheme: string; host: string; port?: number },
  addresses: string[],
): Pick<GitFetchOptions, 'pinnedResolve' | 'sshPin'> {
  const [first] = addresses;
  if (first === undefined || isIpLiteral(target.host)) return {};
  if (target.scheme === 'https') {
    const list = addresses.map((address) => (address.includes(':') ? `[${address}]` : address));
    return { pinnedResolve: [`${target.host}:${target.port ?? 443}:${list.join(',')}`] };
  }
  return target.scheme === 'ssh' ? { sshPin: { address: first, hostKeyAlias: target.host } } : {};
}

/** Compose file → its services (builds allowed, contexts inside the repository); Dockerfile → one `web`. */
async function draftPlan(
  checkout: string,
  analysis: Analysis,
  variables: Record<string, string>,
  limits: ContainerLimitPolicy | undefined,
): Promise<Plan> {
  const options = { allowBuild: true, ...(limits ? { limits } : {}) };
  if (analysis.composeFile) {
    return parseCompose(
      await readRepoFile(checkout, analysis.composeFile, COMPOSE_LIMIT),
      variables,
      options,
    );
  }
  // Variables become the container's environment; `$$` keeps compose from interpolating them.
  const environment = Object.fromEntries(
    Object.entries(variables).map(([key, value]) => [key, value.replaceAll('$', '$$$$')]),
  );
  const document = {
    services: {
      web: {
        build: { context: '.', dockerfile: analysis.dockerfile ?? 'Dockerfile' },
        ...(Object.keys(environment).length > 0 ? { environment } : {}),
        ...(analysis.port ? { expose: [String(analysis.port)] } : {}),
      },
    },
  };
  // JSON is YAML: the generated definition goes through the same policy as a tenant's.
  return parseCompose(JSON.stringify(document), {}, options);
}

/**
 * Missing branches, refused transports and oversized repositories are permanent; so is running out
 * of GIT_CLONE_TIMEOUT_MS (a retry would time out again). A cancelled or timed-out deployment
 * (the run's own signal) is left to the processor.
 */
async function git<T>(
  deps: RepositorySourceDeps,
  run: RepositoryRun,
  fetch: GitFetchOptions,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof GitSourceError) throw new PermanentStepError(error.message, { cause: error });
    if (fetch.signal.aborted && !run.signal.aborted)
      throw new PermanentStepError(
        `fetching the repository did not finish within ${Math.round(deps.cloneTimeoutMs / 1000)}s (GIT_CLONE_TIMEOUT_MS)`,
        { cause: error },
      );
    throw error;
  }
}

async function content<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof RepositoryContentError)
      throw new PermanentStepError(error.message, { cause: error });
    throw error;
  }
}
