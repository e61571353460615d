import { describe, expect, it } from 'vitest';
import { dockerfileImages } from './dockerfile-images.js';

describe('dockerfileImages', () => {
  it('finds FROM and COPY --from images, skipping stages, scratch and stage indexes', () => {
    const text = [
      '# syntax is not used',
      'ARG BASE=local/busybox:1',
      'ARG TAG',
      'FROM --platform=linux/amd64 ${BASE} AS build',
      'RUN echo \\',
      '  FROM not/an-instruction:1',
      'FROM build AS second',
      'FROM scratch',
      'COPY --from=build /a /a',
      'COPY --from=0 /a /b',
      'copy --from=127.0.0.1:2019/x:1 /c /c',
      'from hostctl/0123456789ab:${TAG:-deadbeef}',
    ].join('\n');
    expect(dockerfileImages(text)).toEqual({
      images: ['local/busybox:1', '127.0.0.1:2019/x:1', 'hostctl/0123456789ab:deadbeef'],
      problems: [],
    });
  });

  it('reports a FROM whose variable no global ARG resolves, instead of guessing', () => {
    expect(dockerfileImages('FROM ${IMAGE}\n').problems).toEqual([
      'FROM ${IMAGE} uses a variable that is not a global ARG with a default',
    ]);
    // An ARG after the first FROM does not apply to FROM lines.
    expect(dockerfileImages('FROM local/busybox:1\nARG X=evil\nFROM $X\n').problems).toHaveLength(1);
  });

  it('honours the backtick escape directive for continuations', () => {
    const text = '# escape=`\nFROM `\n  127.0.0.1:2019/x:1\n';
    expect(dockerfileImages(text).images).toEqual(['127.0.0.1:2019/x:1']);
  });
});
