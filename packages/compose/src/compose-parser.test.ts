import { LIMITS } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { renderCompose } from './compose.renderer.js';
import { DEFAULT_CONTAINER_LIMITS } from './container-limits.js';
import { startOrder } from './dependency-graph.js';
import { problemsOf, withService } from './test-helpers.js';

describe('expansion is bounded and happens before validation', () => {
  it('catches privileged smuggled in through a merge key', () => {
    const text =
      'x-base: &base\n  privileged: true\n  image: local/busybox:1\nservices:\n  web:\n    <<: *base\n';
    expect(problemsOf(text)).toContainEqual(expect.objectContaining({ path: 'services.web.privileged' }));
  });

  it('catches a host bind smuggled in through nested anchors', () => {
    const text =
      'x-vols: &vols ["/var/run/docker.sock:/s"]\nservices:\n  web:\n    image: a\n    volumes: *vols\n';
    expect(problemsOf(text)).toContainEqual(expect.objectContaining({ path: 'services.web.volumes[0]' }));
  });

  it('catches network_mode smuggled through a variable-free merge list', () => {
    const text = 'x-a: &a {network_mode: host}\nx-b: &b {image: a}\nservices:\n  web:\n    <<: [*b, *a]\n';
    expect(problemsOf(text)).toContainEqual(expect.objectContaining({ path: 'services.web.network_mode' }));
  });

  it('refuses an alias bomb without expanding it', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i += 1) {
      const previous = String.fromCharCode(96 + i);
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${previous}`).join(',')}]`,
      );
    }
    const text = `x-bomb:\n${levels.map((line) => `  ${line}`).join('\n')}\nservices:\n  web:\n    image: a\n`;
    const started = Date.now();
    expect(problemsOf(text)).toEqual([{ path: '(root)', message: expect.stringMatching(/alias/) }]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a document over the size limit before parsing it', () => {
    const text = withService(`    environment:\n      BIG: "${'x'.repeat(LIMITS.composeMaxBytes)}"`);
    expect(problemsOf(text)).toEqual([{ path: '(root)', message: expect.stringMatching(/exceeds 256 KiB/) }]);
  });

  it('refuses duplicate keys (a later key could hide an earlier one)', () => {
    expect(problemsOf('services:\n  web:\n    image: a\n    image: b\n')[0]?.message).toMatch(/unique/);
  });

  it('refuses custom tags', () => {
    expect(problemsOf('services:\n  web:\n    image: !!binary aGk=\n')).not.toEqual([]);
  });

  it('validates a literal __proto__ key like any other key', () => {
    expect(problemsOf(withService('    __proto__: {privileged: true}'))).toContainEqual(
      expect.objectContaining({ path: 'services.web.__proto__' }),
    );
  });
});

describe('interpolation', () => {
  const doc = withService(
    '    environment:\n      A: ${FOO}\n      B: ${MISSING:-fallback}\n      C: "$$HOME"\n      D: $FOO-x\n      E: ${EMPTY:-e}\n      F: ${EMPTY-f}',
  );

  it('substitutes the given variables only', () => {
    const plan = parseCompose(doc, { FOO: 'bar', EMPTY: '' });
    expect(plan.containers[0]?.environment).toEqual({
      A: 'bar',
      B: 'fallback',
      C: '$HOME',
      D: 'bar-x',
      E: 'e',
      F: '',
    });
  });

  it('names an unknown variable without showing any value', () => {
    const errors = problemsOf(doc, { EMPTY: 'secret-value' });
    expect(errors).toContainEqual({ path: 'services.web.environment.A', message: 'variable FOO is not set' });
    expect(JSON.stringify(errors)).not.toContain('secret-value');
  });

  it('never reads the worker environment', () => {
    process.env.HOSTCTL_TEST_LEAK = 'leaked';
    expect(problemsOf(withService('    environment: {X: "${HOSTCTL_TEST_LEAK}"}'))[0]?.message).toBe(
      'variable HOSTCTL_TEST_LEAK is not set',
    );
    const plan = parseCompose(withService('    environment: [HOSTCTL_TEST_LEAK]'), {});
    expect(plan.containers[0]?.environment).toEqual({});
    delete process.env.HOSTCTL_TEST_LEAK;
  });

  it('fills a value-less environment entry from the variables', () => {
    expect(
      parseCompose(withService('    environment: [TOKEN]'), { TOKEN: 't' }).containers[0]?.environment,
    ).toEqual({ TOKEN: 't' });
  });

  it('cannot inject structure through a value', () => {
    const plan = parseCompose(withService('    command: ${CMD}'), { CMD: 'x\n    privileged: true' });
    expect(plan.containers[0]?.command).toEqual(['x', 'privileged:', 'true']);
  });

  it.each([
    ['${REQ:?set REQ}', /required variable REQ is not set: set REQ/],
    ['${1BAD}', /expected a variable name/],
    ['$', /write \$\$ for a literal/],
    ['${UNCLOSED', /unterminated/],
    ['${X:=y}', /unsupported modifier/],
  ])('refuses %s', (value, message) => {
    expect(problemsOf(withService(`    command: ["${value}"]`))[0]?.message).toMatch(message);
  });

  it('supports nested defaults and alternates', () => {
    const plan = parseCompose(withService('    command: ["${A:-${B}}", "${B:+set}", "${C:+set}"]'), {
      B: 'b',
    });
    expect(plan.containers[0]?.command).toEqual(['b', 'set', '']);
  });
});

describe('dependencies', () => {
  it('refuses a cycle', () => {
    const text =
      'services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [c]\n  c:\n    image: x\n    depends_on: [a]\n';
    expect(problemsOf(text)).toEqual([
      { path: 'services.a.depends_on', message: 'dependency cycle: a -> b -> c -> a' },
    ]);
  });

  it('refuses unknown and self references', () => {
    const text = 'services:\n  a:\n    image: x\n    depends_on: [ghost, a]\n';
    expect(problemsOf(text).map((error) => error.message)).toEqual([
      'unknown service ghost',
      'a cannot depend on itself',
    ]);
  });

  it('orders containers after their dependencies', () => {
    const text =
      'services:\n  web:\n    image: x\n    depends_on: {api: {condition: service_healthy}}\n  api:\n    image: x\n    depends_on: [db]\n  db:\n    image: x\n';
    expect(startOrder(parseCompose(text, {})).map((container) => container.name)).toEqual([
      'db',
      'api',
      'web',
    ]);
  });
});

describe('documents', () => {
  it('collects every problem at once', () => {
    const text = 'networks: {}\nservices:\n  Bad_Name:\n    privileged: true\n    cap_add: [ALL]\n';
    expect(problemsOf(text).map((error) => error.path)).toEqual([
      'networks',
      'services.Bad_Name',
      'services.Bad_Name.privileged',
      'services.Bad_Name.cap_add',
      'services.Bad_Name.image',
    ]);
  });

  it.each([
    ['no services', 'version: "3"\n'],
    ['empty services', 'services: {}\n'],
    ['a list', '- a\n'],
    [
      'too many services',
      `services:\n${Array.from({ length: 21 }, (_, i) => `  s${i}:\n    image: x\n`).join('')}`,
    ],
  ])('refuses %s', (_name, text) => {
    expect(problemsOf(text)).not.toEqual([]);
  });

  it('normalises a realistic document into a plan', () => {
    const text = `version: "3.9"
name: ignored
x-env: &env
  LOG_LEVEL: info
services:
  db:
    image: registry.local:5000/postgres:16
    environment:
      <<: *env
      POSTGRES_PASSWORD: \${DB_PASSWORD}
    volumes: [pgdata:/var/lib/postgresql/data]
    healthcheck:
      test: pg_isready -U postgres
      interval: 5s
      timeout: 3s
      retries: 10
      start_period: 1m30s
  web:
    image: local/busybox:1
    command: httpd -f -p 8080 -h "/www root"
    entrypoint: ["/bin/sh", "-c"]
    ports: ["127.0.0.1:80:8080", "9000"]
    expose: [9100]
    depends_on:
      db: {condition: service_healthy}
    labels: [team=a, empty]
    restart: on-failure:3
    init: true
    user: "1000:1000"
    working_dir: /www
    hostname: frontend
    deploy: {resources: {limits: {cpus: "0.5", memory: 256M}}}
volumes:
  pgdata: {}
`;
    const plan = parseCompose(text, { DB_PASSWORD: 's3cret' });
    expect(plan.web).toEqual({ container: 'web', port: 8080 });
    expect(plan.volumes).toEqual(['pgdata']);
    expect(plan.containers[0]).toMatchObject({
      name: 'db',
      environment: { LOG_LEVEL: 'info', POSTGRES_PASSWORD: 's3cret' },
      volumes: [{ volume: 'pgdata', target: '/var/lib/postgresql/data', readOnly: false }],
      healthcheck: {
        test: ['CMD-SHELL', 'pg_isready -U postgres'],
        intervalMs: 5000,
        timeoutMs: 3000,
        retries: 10,
        startPeriodMs: 90_000,
      },
      restart: 'unless-stopped',
      ports: [],
    });
    expect(plan.containers[1]).toEqual({
      name: 'web',
      image: 'local/busybox:1',
      command: ['httpd', '-f', '-p', '8080', '-h', '/www root'],
      entrypoint: ['/bin/sh', '-c'],
      environment: {},
      labels: { team: 'a', empty: '' },
      volumes: [],
      ports: [8080, 9000, 9100],
      dependsOn: ['db'],
      restart: 'on-failure',
      restartMaxRetries: 3,
      init: true,
      user: '1000:1000',
      workingDir: '/www',
      hostname: 'frontend',
      limits: { nanoCpus: 500_000_000, memoryBytes: 256 * 1024 * 1024, pids: 512 },
    });
  });

  it('picks the first listening container when none is called web', () => {
    const text =
      'services:\n  worker:\n    image: x\n  api:\n    image: x\n    expose: ["3000/tcp"]\n  admin:\n    image: x\n    ports: [4000]\n';
    expect(parseCompose(text, {}).web).toEqual({ container: 'api', port: 3000 });
  });

  it('has no web endpoint when nothing listens', () => {
    expect(parseCompose('services:\n  worker:\n    image: x\n', {}).web).toBeUndefined();
  });
});

describe('Swarm deploy settings', () => {
  const document = withService(
    [
      '    deploy:',
      '      replicas: 3',
      '      placement:',
      '        constraints: ["node.role == worker", "node.labels.zone != eu-2"]',
      '        preferences: [{spread: node.labels.zone}]',
      '      resources:',
      '        limits: {cpus: "1", memory: 256M}',
      '        reservations: {cpus: "0.25", memory: 64M}',
    ].join('\n'),
  );

  // Placement is the operator's to open (SWARM_PLACEMENT_ALLOWED; placement-policy.test.ts).
  const options = {
    limits: { ...DEFAULT_CONTAINER_LIMITS, placementAllowed: ['node.role', 'node.labels.zone'] },
  };

  it('reads replicas, placement and reservations into the plan', () => {
    const [web] = parseCompose(document, {}, options).containers;
    expect(web).toMatchObject({
      replicas: 3,
      placement: {
        constraints: ['node.role == worker', 'node.labels.zone != eu-2'],
        preferences: ['node.labels.zone'],
      },
      reservations: { nanoCpus: 250_000_000, memoryBytes: 64 * 1024 * 1024 },
      limits: { nanoCpus: 1_000_000_000, memoryBytes: 256 * 1024 * 1024 },
    });
  });

  it('renders them back so the rendered document parses to the same plan', () => {
    const plan = parseCompose(document, {}, options);
    expect(parseCompose(renderCompose(plan), {}, options).containers).toEqual(plan.containers);
  });

  it('leaves them out when the document has none', () => {
    const [web] = parseCompose(withService(''), {}).containers;
    expect(web).not.toHaveProperty('replicas');
    expect(web).not.toHaveProperty('placement');
    expect(web).not.toHaveProperty('reservations');
  });
});
