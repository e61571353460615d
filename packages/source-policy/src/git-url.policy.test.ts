import { describe, expect, it } from 'vitest';
import { parseAllowedHosts } from './allowed-hosts.js';
import { checkGitUrl } from './git-url.policy.js';
import { protectedEndpoints } from './protected-endpoints.js';

const open = { allowedHosts: [] };
const lab = {
  allowedHosts: parseAllowedHosts('127.0.0.1:9418,127.0.0.1:8080,127.0.0.1:32768-60999,git.internal,::1'),
  protectedEndpoints: protectedEndpoints(['postgresql://postgres@127.0.0.1:5432/x', 'http://127.0.0.1:2019']),
};

describe('checkGitUrl accepts', () => {
  it.each([
    ['https://github.com/org/repo.git', 'https', 'github.com', undefined],
    ['https://GitHub.com:8443/org/repo', 'https', 'github.com', 8443],
    ['ssh://git@gitlab.example.com:2222/group/sub/repo.git', 'ssh', 'gitlab.example.com', 2222],
    ['ssh://gitlab.example.com/repo.git', 'ssh', 'gitlab.example.com', undefined],
    ['git@github.com:org/repo.git', 'ssh', 'github.com', undefined],
    ['github.com:org/repo.git', 'ssh', 'github.com', undefined],
    ['git@git.example.org:/srv/git/repo.git', 'ssh', 'git.example.org', undefined],
    ['https://[2606:4700::1111]/org/repo.git', 'https', '2606:4700::1111', undefined],
    ['https://8.8.8.8/org/repo.git', 'https', '8.8.8.8', undefined],
  ])('%s', (url, scheme, host, port) => {
    const result = checkGitUrl(url, open);
    expect(result).toEqual({
      ok: true,
      url: { scheme, host, ...(port ? { port } : {}), isAllowlisted: false },
    });
  });
});

describe('checkGitUrl refuses', () => {
  it.each([
    ['', /empty/],
    ['x'.repeat(2049), /longer than/],
    ['-uhttps://github.com/x', /start with "-"/],
    ['--upload-pack=touch /tmp/x', /start with "-"|whitespace/],
    ['ext::sh -c touch% /tmp/pwned', /whitespace/],
    ['ext::sh', /remote-helper/],
    ['fd::17', /remote-helper/],
    ['file:///etc/passwd', /scheme file/],
    ['file://localhost/srv/repo.git', /scheme file/],
    ['ftp://example.com/repo.git', /scheme ftp/],
    ['/srv/git/repo.git', /local paths/],
    ['./repo', /local paths/],
    ['../repo', /local paths/],
    ['~/repo', /local paths/],
    ['repo', /local paths/],
    ['https://user:pass@github.com/org/repo.git', /credentials/],
    ['https://ghp_token@github.com/org/repo.git', /credentials/],
    ['ssh://git:secret@github.com/org/repo.git', /password/],
    ['ssh://-oProxyCommand=x@github.com/org/repo.git', /user name/],
    ['-oProxyCommand=x@github.com:org/repo.git', /start with "-"/],
    ['git@-oProxyCommand=x:org/repo', /host name/],
    ['https://github.com/org/repo.git?x=1', /not a valid repository URL/],
    ['https://github.com/org/repo.git#main', /not a valid repository URL/],
    ['https://github.com', /no repository path/],
    ['https://github.com/', /no repository path/],
    ['https://github.com/org/../repo', /"\.\."/],
    ['https://github.com/org/-repo', /starting with "-"/],
    ['git@github.com:-repo', /starting with "-"/],
    ['https://github.com:0/org/repo', /port/],
    ['https://github.com:99999/org/repo', /port/],
    ['https://github.com/org/ré', /non-ASCII/],
    ['https://git hub.com/org/repo', /whitespace/],
    ['http://github.com/org/repo.git', /only allowed for hosts in GIT_ALLOWED_HOSTS/],
    ['git://github.com/org/repo.git', /only allowed for hosts in GIT_ALLOWED_HOSTS/],
    ['https://127.0.0.1/org/repo.git', /loopback/],
    ['https://127.1/org/repo.git', /canonical/],
    ['https://2130706433/org/repo.git', /canonical/],
    ['https://0x7f.0.0.1/org/repo.git', /canonical/],
    ['https://10.1.2.3/org/repo.git', /private/],
    ['https://192.168.1.1/org/repo.git', /private/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://[::1]/org/repo.git', /loopback/],
    ['https://[::ffff:127.0.0.1]/org/repo.git', /loopback/],
    ['https://[fd00::1]/org/repo.git', /unique-local/],
    ['https://[fe80::1]/org/repo.git', /link-local/],
    ['https://224.0.0.1/org/repo.git', /multicast/],
    ['https://localhost/org/repo.git', /localhost/],
    ['https://git.localhost/org/repo.git', /localhost/],
    ['https://gitserver/org/repo.git', /fully qualified/],
    ['https://-bad.example.com/org/repo.git', /host name/],
    ['https://[zz::1]/org/repo.git', /not a valid repository URL|IPv6/],
  ])('%s', (url, reason) => {
    const result = checkGitUrl(url, open);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});

describe('checkGitUrl with an allowlist', () => {
  it.each([
    ['git://127.0.0.1:9418/repo.git', 'git'],
    ['http://127.0.0.1:8080/repo.git', 'http'],
    ['https://git.internal/org/repo.git', 'https'],
    ['http://GIT.internal./org/repo.git', 'http'],
    ['git://[::1]/repo.git', 'git'],
    ['git://127.0.0.1:40000/repo.git', 'git'],
  ])('allows %s (private targets and http/git schemes)', (url, scheme) => {
    const result = checkGitUrl(url, lab);
    expect(result).toMatchObject({ ok: true, url: { scheme, isAllowlisted: true } });
  });

  it.each([
    ['git://127.0.0.2/repo.git', /GIT_ALLOWED_HOSTS/],
    ['https://evil.git.internal/repo.git', /fully qualified|localhost|ok/],
    ['file:///srv/repo.git', /scheme file/],
    ['ext::127.0.0.1', /remote-helper/],
    ['http://user:pw@127.0.0.1/repo.git', /credentials/],
    // A bare entry opens the default port only; a port entry only that port or range.
    ['http://git.internal:2019/repo.git', /GIT_ALLOWED_HOSTS/],
    ['https://git.internal:8443/org/repo.git', /fully qualified|ok/],
    ['git://127.0.0.1:9419/repo.git', /GIT_ALLOWED_HOSTS/],
    ['http://127.0.0.1/repo.git', /GIT_ALLOWED_HOSTS/],
    ['git://[::1]:5432/repo.git', /control-plane endpoint/],
    ['http://127.0.0.1:2019/repo.git', /control-plane endpoint/],
    ['http://127.0.0.2:5432/repo.git', /control-plane endpoint/],
    ['http://0.0.0.0:6379/repo.git', /control-plane endpoint/],
    ['http://localhost:8081/repo.git', /control-plane endpoint/],
    ['https://127.0.0.1:3000/org/repo.git', /control-plane endpoint/],
  ])('still refuses %s', (url, reason) => {
    const result = checkGitUrl(url, lab);
    if (result.ok) {
      // evil.git.internal is a public-looking FQDN: allowed by syntax, but not allowlisted.
      expect(result.url.isAllowlisted).toBe(false);
    } else {
      expect(result.reason).toMatch(reason);
    }
  });
});
