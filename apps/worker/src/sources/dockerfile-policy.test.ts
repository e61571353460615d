import { describe, expect, it } from 'vitest';
import { checkDockerfile } from './dockerfile-policy.js';

// What a tenant would write to make the daemon (host network, no egress rules) fetch something.
const refused: [string, string, number][] = [
  ['plain URL', 'FROM busybox\nADD http://127.0.0.1:2019/config/ /caddy.json\n', 2],
  ['https', 'FROM busybox\nADD https://169.254.169.254/latest/meta-data/ /m\n', 2],
  ['lower-case keyword', 'FROM busybox\nadd http://127.0.0.1:2019/config/ /x\n', 2],
  ['mixed-case keyword, indented', 'FROM busybox\n\t  aDd http://10.0.0.1/ /x\n', 2],
  ['JSON form', 'FROM busybox\nADD ["http://127.0.0.1:2019/config/", "/x"]\n', 2],
  ['quoted source', 'FROM busybox\nADD "http://127.0.0.1:2019/" /x\n', 2],
  ['single-quoted', "FROM busybox\nADD 'http://127.0.0.1/' /x\n", 2],
  ['escaped characters', 'FROM busybox\nADD h\\ttp://127.0.0.1/ /x\n', 2],
  ['continuation', 'FROM busybox\nADD \\\n   http://127.0.0.1:2019/ \\\n  /x\n', 2],
  ['comment inside continuation', 'FROM busybox\nADD \\\n# hide\n\nhttp://127.0.0.1/ /x\n', 2],
  ['backtick escape directive', '# escape=`\nFROM busybox\nADD `\n  http://127.0.0.1/ /x\n', 3],
  ['escape directive with spaces', '#  ESCAPE = `\nFROM busybox\nADD `\nhttp://127.0.0.1/ /x\n', 3],
  ['--checksum', 'FROM busybox\nADD --checksum=sha256:0123 http://127.0.0.1/a /a\n', 2],
  ['--chown before URL', 'FROM busybox\nADD --chown=1:1 --chmod=755 https://127.0.0.1/a /a\n', 2],
  ['second of several sources', 'FROM busybox\nADD ok.txt http://127.0.0.1/a /dir/\n', 2],
  ['git over ssh', 'FROM busybox\nADD git@github.com:acme/app.git /src\n', 2],
  ['git over https', 'FROM busybox\nADD https://github.com/acme/app.git#main /src\n', 2],
  ['other scheme', 'FROM busybox\nADD ftp://127.0.0.1/a /a\n', 2],
  ['ARG variable', 'ARG U=http://127.0.0.1:2019/\nFROM busybox\nADD $U /x\n', 3],
  ['braced ENV variable', 'FROM busybox\nENV U=http://127.0.0.1/\nADD ${U} /x\n', 3],
  ['heredoc', 'FROM busybox\nADD <<EOF /x\nhttp://127.0.0.1/\nEOF\n', 2],
  ['COPY heredoc', 'FROM busybox\nCOPY <<EOF /x\nhi\nEOF\n', 2],
  ['ONBUILD ADD', 'FROM busybox AS base\nONBUILD ADD http://127.0.0.1/ /x\nFROM base\n', 2],
  ['onbuild lower case', 'FROM busybox\nonbuild add ["http://127.0.0.1/", "/x"]\n', 2],
  ['COPY --from an image', 'FROM busybox\nCOPY --from=busybox:1 /bin/sh /sh\n', 2],
  ['COPY --from a registry', 'FROM busybox\nCOPY --from=127.0.0.1:5000/secret:1 / /s\n', 2],
  ['COPY --from a later stage index', 'FROM busybox\nCOPY --from=1 / /s\nFROM busybox\n', 2],
  ['COPY --from variable', 'ARG I=busybox\nFROM busybox\nCOPY --from=$I / /s\n', 3],
  ['ONBUILD COPY --from image', 'FROM busybox\nONBUILD COPY --from=alpine / /a\n', 2],
  // Engines differ on when directives stop (20.10 at `# syntax=`, newer ones later): both readings.
  [
    'escape after a syntax directive',
    '# syntax=docker/dockerfile:1\n# escape=`\nFROM busybox\nADD `\n  http://127.0.0.1/ /x\n',
    4,
  ],
  ['escape directive after a blank line', '\n# escape=`\nFROM busybox\nADD `\nhttp://127.0.0.1/ /x\n', 4],
  [
    'backslash continuation under a backtick escape',
    '# escape=`\nFROM busybox\nADD \\\nhttp://127.0.0.1/ /x\n',
    3,
  ],
  ['CRLF line endings', 'FROM busybox\r\nADD \\\r\n http://127.0.0.1/ /x\r\n', 2],
];

describe('checkDockerfile refuses what the daemon would fetch', () => {
  it.each(refused)('%s', (_name, text, line) => {
    const verdict = checkDockerfile(text);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems.join('\n')).toContain(`Dockerfile line ${line}:`);
  });

  it('names the Dockerfile it was given', () => {
    const verdict = checkDockerfile('FROM busybox\nADD http://x/ /x\n', { name: 'docker/web.Dockerfile' });
    expect(verdict.problems).toEqual([
      expect.stringMatching(/^docker\/web\.Dockerfile line 2: ADD from a URL/),
    ]);
  });
});

const accepted: [string, string][] = [
  ['local ADD', 'FROM busybox\nADD app.tar.gz /app/\nADD . /src\n'],
  ['ADD with flags', 'FROM busybox\nADD --chown=1:1 ["a b.txt", "/x"]\n'],
  ['COPY', 'FROM busybox\nCOPY . /www\n'],
  [
    'RUN downloads (the build container is under the egress policy)',
    'FROM busybox\nRUN wget http://example.com/\n',
  ],
  [
    'COPY --from a named stage',
    'FROM busybox AS Build\nRUN true\nFROM scratch\nCOPY --from=build /bin /bin\n',
  ],
  ['COPY --from an earlier index', 'FROM busybox\nFROM scratch\nCOPY --from=0 /bin /bin\n'],
  [
    'RUN continuations',
    'FROM busybox\nRUN adduser -D app && \\\n    add-shell /bin/sh || true \\\n    && wget http://example.com/a\nCOPY --chown=app . /app\n',
  ],
  ['URL in a comment', 'FROM busybox\n# ADD http://127.0.0.1/ /x\nCOPY . /x\n'],
  [
    'backslash is no continuation under the backtick escape',
    '# escape=`\nFROM busybox\nRUN echo a\\\nCOPY . /x\n',
  ],
];

describe('checkDockerfile accepts ordinary builds', () => {
  it.each(accepted)('%s', (_name, text) => {
    expect(checkDockerfile(text)).toMatchObject({ ok: true, problems: [] });
  });
});

describe('the FROM hook (image policy)', () => {
  it('sees every pulled image, variables expanded, and not stages or scratch', () => {
    const seen: string[] = [];
    const verdict = checkDockerfile(
      'ARG BASE=127.0.0.1:5000/busybox:1\nARG TAG\nFROM $BASE AS build\nFROM build\nFROM ${BASE}\nFROM scratch\nFROM --platform=linux/amd64 other:${TAG:-2}\n',
      {
        checkImage: (image) => {
          seen.push(image);
          return image.startsWith('other')
            ? { ok: false, reason: 'not from an allowed registry' }
            : { ok: true };
        },
      },
    );
    expect(seen).toEqual(['127.0.0.1:5000/busybox:1', '127.0.0.1:5000/busybox:1', 'other:2']);
    expect(verdict.problems).toEqual(['Dockerfile line 7: FROM other:2: not from an allowed registry']);
  });

  it('refuses a FROM whose variable has no value', () => {
    expect(checkDockerfile('ARG BASE\nFROM $BASE\n').problems[0]).toMatch(
      /line 2: FROM \$BASE uses a variable/,
    );
  });
});

describe('the images a Dockerfile makes the engine pull', () => {
  it('are the FROM images, global ARG defaults expanded, stages and scratch skipped', () => {
    const text = [
      'ARG BASE=local/busybox:1',
      'ARG TAG',
      'FROM --platform=linux/amd64 ${BASE} AS build',
      'RUN echo \\',
      '  FROM not/an-instruction:1',
      'FROM build AS second',
      'FROM scratch',
      'COPY --from=build /a /a',
      'COPY --from=0 /a /b',
      'from hostctl/0123456789ab:${TAG:-deadbeef}',
    ].join('\n');
    expect(checkDockerfile(text)).toEqual({
      ok: true,
      problems: [],
      images: ['local/busybox:1', 'hostctl/0123456789ab:deadbeef'],
    });
  });

  it('refuse a FROM whose variable no global ARG resolves, instead of guessing', () => {
    expect(checkDockerfile('FROM ${IMAGE}\n').problems).toEqual([
      'Dockerfile line 1: FROM ${IMAGE} uses a variable without a value',
    ]);
    // An ARG after the first FROM does not apply to FROM lines.
    expect(checkDockerfile('FROM local/busybox:1\nARG X=evil\nFROM $X\n').ok).toBe(false);
  });

  it('honour the backtick escape directive for continuations', () => {
    expect(checkDockerfile('# escape=`\nFROM `\n  127.0.0.1:2019/x:1\n').images).toEqual([
      '127.0.0.1:2019/x:1',
    ]);
  });
});
