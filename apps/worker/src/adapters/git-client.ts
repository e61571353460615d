import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { DomainError } from '@hostctl/domain';

/**
 * Talks to git remotes through simple-git (the only file importing it). Every call passes the
 * URL as one argument after `--`; nothing goes through a shell. git runs with a fixed, hardened
 * configuration: no system/global config (an operator's `url.insteadOf` must not rewrite tenant
 * URLs), only the transports the URL policy allowed (GIT_ALLOW_PROTOCOL), no redirects, no
 * credential prompts, objects checked on arrival, and the address the SSRF check approved pinned
 * so a second DNS answer cannot point git elsewhere: http.curloptResolve for https, HostName
 * through a fixed GIT_SSH wrapper for ssh.
 */
export interface GitFetchOptions {
  signal: AbortSignal;
  /** Transports git may use for this URL (https, ssh, and http/git for allowlisted hosts). */
  protocols: string[];
  /** host:port:address entries for curl (https). */
  pinnedResolve?: string[];
  /** ssh: connect to `address` whatever DNS answers now; host keys are still checked by name. */
  sshPin?: { address: string; hostKeyAlias: string };
  /** Kill a git process that produces no output for this long. */
  idleTimeoutMs?: number;
}

export interface ResolvedBranch {
  branch: string;
  commit: string;
}

export interface GitClient {
  /** The commit `branch` points at on the remote; the remote's default branch when none is given. */
  resolveBranch(url: string, branch: string | undefined, options: GitFetchOptions): Promise<ResolvedBranch>;
  /**
   * Shallow, single-branch clone into `dir` (which must not exist); returns the checked-out commit.
   * With `commit` (a push's), exactly that commit is checked out, and only when it moves the
   * service forward on `branch`: it is the branch's head, or it is in the branch's history and a
   * descendant of `runningCommit`. Anything else fails with a GitSourceError saying why.
   */
  clone(
    url: string,
    dir: string,
    branch: string,
    options: GitFetchOptions & { maxPackBytes: number; commit?: string; runningCommit?: string | null },
  ): Promise<string>;
}

/** A failure a retry cannot fix: missing branch or repository, oversized repository. */
export class GitSourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitSourceError';
  }
}

const ALLOWED_ENV = ['GIT_TERMINAL_PROMPT', 'GIT_ALLOW_PROTOCOL', 'GIT_CONFIG_NOSYSTEM'];
// An empty HOME instead of GIT_CONFIG_GLOBAL (which simple-git refuses): no ~/.gitconfig is read.
// ssh still finds the worker's keys and known_hosts: it looks them up through the passwd entry.
const GIT_HOME = path.join(os.tmpdir(), 'hostctl-git-home');

/**
 * GIT_SSH for pinned ssh: git runs it directly (no shell) with ssh's usual arguments, and it adds
 * `-o HostName=<approved address>` (command-line options win over ssh_config) and
 * `-o HostKeyAlias=<name>` (known_hosts is still checked under the repository's host name). The
 * values come from the environment, quoted: nothing of a URL is ever part of a command string.
 */
const PINNED_SSH = path.join(GIT_HOME, 'pinned-ssh');
const PINNED_SSH_SCRIPT = `#!/bin/sh
exec ssh -o "HostName=$HOSTCTL_SSH_ADDRESS" -o "HostKeyAlias=$HOSTCTL_SSH_HOST_KEY_ALIAS" "$@"
`;

function gitFor(baseDir: string, options: GitFetchOptions, signal: AbortSignal): SimpleGit {
  const { sshPin } = options;
  return simpleGit({
    baseDir,
    abort: signal,
    timeout: { block: options.idleTimeoutMs ?? 60_000 },
    allowEnvironment: sshPin ? [...ALLOWED_ENV, 'GIT_SSH', 'GIT_SSH_VARIANT'] : ALLOWED_ENV,
    // simple-git guards GIT_SSH because it names a program to run: ours, fixed, written below.
    ...(sshPin ? { unsafe: { allowUnsafeSshCommand: true } } : {}),
    config: [
      'http.followRedirects=false',
      'transfer.fsckObjects=true',
      'submodule.recurse=false',
      ...(options.pinnedResolve ?? []).map((entry) => `http.curloptResolve=${entry}`),
    ],
  }).env({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: GIT_HOME,
    XDG_CONFIG_HOME: GIT_HOME,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: options.protocols.join(':'),
    GIT_CONFIG_NOSYSTEM: '1',
    ...(sshPin
      ? {
          GIT_SSH: PINNED_SSH,
          // It is OpenSSH underneath: git may pass -p and -o SendEnv (no probing with -G).
          GIT_SSH_VARIANT: 'ssh',
          HOSTCTL_SSH_ADDRESS: sshPin.address,
          HOSTCTL_SSH_HOST_KEY_ALIAS: sshPin.hostKeyAlias,
        }
      : {}),
  });
}

export function createGitClient(): GitClient {
  mkdirSync(GIT_HOME, { recursive: true, mode: 0o700 });
  // Written aside and renamed: worker processes sharing the machine never run a half-written file.
  const draft = `${PINNED_SSH}.${process.pid}`;
  writeFileSync(draft, PINNED_SSH_SCRIPT, { mode: 0o700 });
  renameSync(draft, PINNED_SSH);
  return {
    async resolveBranch(url, branch, options) {
      const git = gitFor(os.tmpdir(), options, options.signal);
      const out = await git
        .listRemote(branch ? ['--', url, `refs/heads/${branch}`] : ['--symref', '--', url, 'HEAD'])
        .catch((error: unknown) => {
          throw toGitError(error, `cannot read ${url}`);
        });
      if (branch) {
        const line = out.split('\n').find((entry) => entry.endsWith(`\trefs/heads/${branch}`));
        const commit = line?.split('\t')[0];
        if (!commit) throw new GitSourceError(`branch ${branch} does not exist in ${url}`);
        return { branch, commit };
      }
      // "ref: refs/heads/main\tHEAD" then "<sha>\tHEAD": the default branch and its head.
      const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out);
      const commit = /^([0-9a-f]{40,64})\tHEAD$/m.exec(out)?.[1];
      if (!symref?.[1] || !commit)
        throw new GitSourceError(`${url} has no default branch (empty repository?)`);
      return { branch: symref[1], commit };
    },

    async clone(url, dir, branch, options) {
      // The pack is written while it arrives: watching its size stops an oversized clone early.
      const tooBig = new AbortController();
      const watcher = setInterval(() => {
        void packBytes(dir).then((bytes) => {
          if (bytes > options.maxPackBytes) tooBig.abort();
        });
      }, 250);
      const signal = AbortSignal.any([options.signal, tooBig.signal]);
      try {
        await gitFor(os.tmpdir(), options, signal).clone(url, dir, [
          '--branch',
          branch,
          '--single-branch',
          '--depth',
          '1',
          '--no-tags',
          '--',
        ]);
        const head = (await gitFor(dir, options, signal).revparse(['HEAD'])).trim();
        if (options.commit === undefined || head === options.commit) return head;
        return await checkoutForward(gitFor(dir, options, signal), signal, {
          branch,
          head,
          commit: options.commit,
          running: options.runningCommit ?? null,
        });
      } catch (error) {
        if (tooBig.signal.aborted)
          throw new GitSourceError(
            `the repository is larger than ${Math.round(options.maxPackBytes / 1048576)} MB`,
          );
        throw toGitError(error, `cannot clone ${url} (branch ${branch})`);
      } finally {
        clearInterval(watcher);
      }
    },
  };
}

/**
 * The branch's head is not the pushed commit (the branch moved on, or the push is old): the commit
 * runs only if it lies on the branch between what runs now and the head. The branch's history is
 * fetched (within the clone's size bound) and the commit is looked for there, never fetched by id:
 * an id a server hands out is not proof that the commit is on the tracked branch.
 */
async function checkoutForward(
  git: SimpleGit,
  signal: AbortSignal,
  at: { branch: string; head: string; commit: string; running: string | null },
): Promise<string> {
  const { branch, head, commit, running } = at;
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit))
    throw new GitSourceError(`commit ${commit} is not a full hexadecimal object id`);
  const refused = (why: string) =>
    new GitSourceError(
      `commit ${commit} refused: ${why}; the head of ${branch} is ${head}, and a push only moves a service forward on its branch`,
    );
  if (running === null) throw refused('it is not the head of the branch and no release runs to move on from');
  // A branch of one commit comes complete already; git refuses to unshallow that.
  if ((await git.revparse(['--is-shallow-repository'])).trim() === 'true')
    await git.raw(['fetch', '--unshallow', '--no-tags', 'origin']);
  if (!(await isAncestor(git, signal, commit, head))) throw refused(`it is not on branch ${branch}`);
  if (commit === running) throw refused('it is the commit that runs now');
  if (!(await isAncestor(git, signal, running, commit)))
    throw refused(`it does not descend from the running commit ${running}`);
  await git.raw(['checkout', '--quiet', '--detach', commit]);
  const checkedOut = (await git.revparse(['HEAD'])).trim();
  if (checkedOut !== commit)
    throw new GitSourceError(`checked out ${checkedOut}, not the requested commit ${commit}`);
  return checkedOut;
}

/**
 * Whether `older` is `newer` or in its history. Not `merge-base --is-ancestor`: its "no" is exit 1
 * without a word on stderr, which simple-git does not count as a failure. The merge base of an
 * ancestor and its descendant is the ancestor itself; an unknown object is an error, so a "no".
 */
async function isAncestor(
  git: SimpleGit,
  signal: AbortSignal,
  older: string,
  newer: string,
): Promise<boolean> {
  try {
    return (await git.raw(['merge-base', older, newer])).trim() === older;
  } catch (error) {
    if (signal.aborted) throw error;
    return false;
  }
}

async function packBytes(dir: string): Promise<number> {
  const packDir = path.join(dir, '.git', 'objects', 'pack');
  try {
    const names = await readdir(packDir);
    const sizes = await Promise.all(
      names.map((name) =>
        stat(path.join(packDir, name)).then(
          (info) => info.size,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((sum, size) => sum + size, 0);
  } catch {
    return 0;
  }
}

/** Remote says "not found" → permanent; anything else (network, timeouts) may pass on a retry. */
function toGitError(error: unknown, context: string): Error {
  if (error instanceof GitSourceError) return error;
  const detail = (error instanceof Error ? error.message : String(error))
    .trim()
    .split('\n')
    .slice(-3)
    .join(' ');
  if (
    /not found|not exported|access denied|authentication failed|could not read username|does not appear to be a git repository|not allowed/i.test(
      detail,
    )
  )
    return new GitSourceError(`${context}: ${detail}`, { cause: error });
  return new DomainError('runtime_error', `${context}: ${detail}`, { cause: error });
}
