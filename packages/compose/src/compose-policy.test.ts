import { describe, expect, it } from 'vitest';
import { problemsOf, withService } from './test-helpers.js';

// Every key a tenant could use to escape the container or reach the host must be refused, with the
// key's dotted path. Table-driven so adding a key to the allowlist shows up here as a failing row.
const FORBIDDEN_SERVICE_KEYS: [string, string][] = [
  ['privileged', 'privileged: true'],
  ['cap_add', 'cap_add: [SYS_ADMIN]'],
  ['cap_drop', 'cap_drop: [ALL]'],
  ['devices', 'devices: ["/dev/sda:/dev/sda"]'],
  ['network_mode', 'network_mode: host'],
  ['networks', 'networks: [default]'],
  ['pid', 'pid: host'],
  ['ipc', 'ipc: host'],
  ['uts', 'uts: host'],
  ['userns_mode', 'userns_mode: host'],
  ['security_opt', 'security_opt: ["seccomp:unconfined"]'],
  ['sysctls', 'sysctls: {net.core.somaxconn: 1024}'],
  ['runtime', 'runtime: runc'],
  ['cgroup_parent', 'cgroup_parent: /'],
  ['cgroup', 'cgroup: host'],
  ['volumes_from', 'volumes_from: [other]'],
  ['env_file', 'env_file: /etc/shadow'],
  ['extends', 'extends: {file: /etc/x.yml, service: a}'],
  ['links', 'links: [db]'],
  ['external_links', 'external_links: [other_db]'],
  ['extra_hosts', 'extra_hosts: ["metadata:169.254.169.254"]'],
  ['dns', 'dns: 8.8.8.8'],
  ['tmpfs', 'tmpfs: /run'],
  ['shm_size', 'shm_size: 1g'],
  ['ulimits', 'ulimits: {nofile: 100000}'],
  ['container_name', 'container_name: evil'],
  ['mem_limit', 'mem_limit: 10g'],
  ['device_cgroup_rules', 'device_cgroup_rules: ["c 1:3 mr"]'],
  ['oom_kill_disable', 'oom_kill_disable: true'],
  ['isolation', 'isolation: process'],
  ['platform', 'platform: linux/amd64'],
  ['stop_signal', 'stop_signal: SIGKILL'],
  ['secrets', 'secrets: [s]'],
  ['configs', 'configs: [c]'],
  ['logging', 'logging: {driver: syslog}'],
  ['group_add', 'group_add: [docker]'],
  ['gpus', 'gpus: all'],
  ['storage_opt', 'storage_opt: {size: 1g}'],
  ['unknown_future_key', 'unknown_future_key: 1'],
];

describe('forbidden service keys', () => {
  it.each(FORBIDDEN_SERVICE_KEYS)('refuses %s', (key, line) => {
    const errors = problemsOf(withService(`    ${line}`));
    expect(errors).toContainEqual(expect.objectContaining({ path: `services.web.${key}` }));
    expect(errors.find((error) => error.path === `services.web.${key}`)?.message).toMatch(
      new RegExp(`^${key} is not allowed`),
    );
  });

  it('explains privileged with the message the API shows', () => {
    expect(problemsOf(withService('    privileged: true'))).toEqual([
      {
        path: 'services.web.privileged',
        message: 'privileged is not allowed: containers never run privileged',
      },
    ]);
  });
});

describe('forbidden top-level keys', () => {
  it.each([
    ['networks', 'networks: {default: {external: true}}'],
    ['include', 'include: [/etc/other.yml]'],
    ['secrets', 'secrets: {s: {file: /etc/shadow}}'],
    ['configs', 'configs: {c: {file: /etc/passwd}}'],
  ])('refuses %s', (key, line) => {
    expect(problemsOf(withService('', line))).toContainEqual(expect.objectContaining({ path: key }));
  });
});

describe('host filesystem access through volumes', () => {
  const declared = 'volumes:\n  data: {}\n';
  it.each([
    ['docker socket', '"/var/run/docker.sock:/var/run/docker.sock"', 'services.web.volumes[0]', /host paths/],
    ['socket to elsewhere', '"/var/run/docker.sock:/x"', 'services.web.volumes[0]', /host paths/],
    ['relative path', '"./data:/x"', 'services.web.volumes[0]', /host paths/],
    ['parent path', '"../data:/x"', 'services.web.volumes[0]', /host paths/],
    ['home path', '"~/data:/x"', 'services.web.volumes[0]', /host paths/],
    ['host root', '"/:/host"', 'services.web.volumes[0]', /host paths/],
    ['root read-only', '"/:/host:ro"', 'services.web.volumes[0]', /host paths/],
    ['anonymous volume', '"/data"', 'services.web.volumes[0]', /anonymous/],
    ['undeclared name', '"other:/x"', 'services.web.volumes[0]', /not declared/],
    ['propagation option', '"data:/x:rshared"', 'services.web.volumes[0]', /not allowed/],
    ['relative target', '"data:x"', 'services.web.volumes[0]', /absolute/],
    [
      'long-form bind',
      '{type: bind, source: /, target: /host}',
      'services.web.volumes[0].type',
      /bind is not allowed/,
    ],
    [
      'long-form bind of socket',
      '{type: bind, source: /var/run/docker.sock, target: /s}',
      'services.web.volumes[0].type',
      /not allowed/,
    ],
    [
      'long-form tmpfs',
      '{type: tmpfs, target: /run, tmpfs: {size: 1000}}',
      'services.web.volumes[0].type',
      /tmpfs is not allowed/,
    ],
    [
      'long-form volume with host source',
      '{type: volume, source: /etc, target: /x}',
      'services.web.volumes[0].source',
      /host paths/,
    ],
    [
      'long-form volume with bind options',
      '{type: volume, source: data, target: /x, bind: {propagation: shared}}',
      'services.web.volumes[0].bind',
      /not allowed/,
    ],
    [
      'long-form volume with driver options',
      '{type: volume, source: data, target: /x, volume: {nocopy: true}}',
      'services.web.volumes[0].volume',
      /not allowed/,
    ],
  ])('refuses %s', (_name, mount, path, message) => {
    const errors = problemsOf(withService(`    volumes:\n      - ${mount}`, declared));
    expect(errors).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it.each([
    [
      'driver_opts bind',
      'data:\n    driver: local\n    driver_opts: {type: none, o: bind, device: /}',
      'volumes.data.driver_opts',
    ],
    ['external volume', 'data:\n    external: true', 'volumes.data.external'],
    ['named volume', 'data:\n    name: other-tenant-data', 'volumes.data.name'],
  ])('refuses a top-level volume with %s', (_name, definition, path) => {
    const errors = problemsOf(withService('    volumes: ["data:/x"]', `volumes:\n  ${definition}\n`));
    expect(errors).toContainEqual(expect.objectContaining({ path }));
  });

  it('accepts named volumes in short and long form', () => {
    const text = withService(
      '    volumes:\n      - data:/var/data\n      - logs:/var/log:ro\n      - {type: volume, source: cache, target: /cache/, read_only: true}',
      'volumes:\n  data: {}\n  logs:\n  cache: {}\n',
    );
    expect(problemsOf(text)).toEqual([]);
  });
});

describe('ports', () => {
  it.each([
    ['range', '"8000-8010:80"', /ranges/],
    ['container range', '"80-81"', /ranges/],
    ['udp', '"53:53/udp"', /only tcp/],
    ['sctp long form', '{target: 80, protocol: sctp}', /only tcp/],
    ['zero', '0', /between 1 and 65535/],
    ['too large', '70000', /between 1 and 65535/],
    ['garbage', '"http"', /invalid port/],
  ])('refuses %s', (_name, port, message) => {
    const errors = problemsOf(withService(`    ports:\n      - ${port}`));
    expect(errors.map((error) => error.message)).toContainEqual(expect.stringMatching(message));
  });

  it('refuses expose ranges', () => {
    expect(problemsOf(withService('    expose: ["8000-8001"]'))[0]?.message).toMatch(/ranges/);
  });
});

describe('labels, build and other values', () => {
  it.each([
    [
      'reserved label in map form',
      '    labels: {io.hostctl.service-id: other}',
      'services.web.labels.io.hostctl.service-id',
    ],
    ['reserved label in list form', '    labels: ["IO.HOSTCTL.managed=true"]', 'services.web.labels[0]'],
    ['build without permission', '    build: .', 'services.web.build'],
    ['restart nonsense', '    restart: sometimes', 'services.web.restart'],
    [
      'memory too small',
      '    deploy: {resources: {limits: {memory: 1k}}}',
      'services.web.deploy.resources.limits.memory',
    ],
    ['replicas beyond the limit', '    deploy: {replicas: 50}', 'services.web.deploy.replicas'],
    ['replicas zero', '    deploy: {replicas: 0}', 'services.web.deploy.replicas'],
    [
      'a reservation above its limit',
      '    deploy: {resources: {limits: {cpus: "0.5"}, reservations: {cpus: "1"}}}',
      'services.web.deploy.resources.reservations.cpus',
    ],
    [
      'a placement constraint that is not Swarm syntax',
      '    deploy: {placement: {constraints: ["node.labels.zone = eu; rm -rf"]}}',
      'services.web.deploy.placement.constraints[0]',
    ],
    [
      'a placement preference other than spread',
      '    deploy: {placement: {preferences: [{pack: node.labels.zone}]}}',
      'services.web.deploy.placement.preferences[0]',
    ],
    ['an unknown deploy key', '    deploy: {mode: global}', 'services.web.deploy.mode'],
    [
      'pids not a whole number',
      '    deploy: {resources: {limits: {pids: 1.5}}}',
      'services.web.deploy.resources.limits.pids',
    ],
    [
      'bad duration',
      '    healthcheck: {test: [CMD, "true"], interval: 10}',
      'services.web.healthcheck.interval',
    ],
    [
      'start_interval',
      '    healthcheck: {test: [CMD, "true"], start_interval: 1s}',
      'services.web.healthcheck.start_interval',
    ],
    ['relative working_dir', '    working_dir: app', 'services.web.working_dir'],
    ['unterminated quote', '    command: echo "hi', 'services.web.command'],
    [
      'depends_on completed condition',
      '    depends_on: {web: {condition: service_completed_successfully}}',
      'services.web.depends_on.web.condition',
    ],
  ])('refuses %s', (_name, line, path) => {
    expect(problemsOf(withService(line))).toContainEqual(expect.objectContaining({ path }));
  });

  it.each([
    ['absolute context', '/etc'],
    ['parent context', '../other-repo'],
    ['url context', 'https://example.invalid/repo.git'],
    ['hidden parent', 'sub/../../x'],
  ])('refuses a build with %s even when builds are allowed', (_name, context) => {
    const text = `services:\n  app:\n    build:\n      context: ${JSON.stringify(context)}\n`;
    expect(problemsOf(text, {}, { allowBuild: true })).toContainEqual(
      expect.objectContaining({ path: 'services.app.build.context' }),
    );
  });

  it('accepts a build inside the repository when allowed', () => {
    const text = 'services:\n  app:\n    build: {context: ./app, dockerfile: docker/Dockerfile.prod}\n';
    expect(problemsOf(text, {}, { allowBuild: true })).toEqual([]);
  });
});
