/**
 * Splits a Dockerfile into instructions the way the engine's classic builder does, so a policy
 * check sees what the builder will execute and not what a naive line reader sees: parser
 * directives (`# escape=`), line continuations with the active escape character (comment and
 * empty lines inside a continuation are dropped), case-insensitive keywords, leading `--flags`,
 * and the JSON (exec) form. Variables are not expanded here; the policy decides what to do with them.
 */
export interface Instruction {
  /** Upper-case keyword: `ADD`, `COPY`, `FROM`, `ONBUILD`, … */
  keyword: string;
  /** 1-based line of the keyword in the file. */
  line: number;
  /** `--name=value` flags before the arguments (`--link` gives `''`). Names lower-case. */
  flags: Map<string, string>;
  /** Arguments: the JSON array when the JSON form parses, otherwise the whitespace-separated words. */
  args: string[];
  isJson: boolean;
  /** Everything after the keyword, continuations joined. */
  rest: string;
}

export interface ParsedDockerfile {
  escape: '\\' | '`';
  instructions: Instruction[];
}

const DIRECTIVE = /^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/;

/** `escape` forces the escape character whatever the directives say (see checkDockerfile). */
export function parseDockerfile(text: string, options: { escape?: '\\' | '`' } = {}): ParsedDockerfile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let escape: '\\' | '`' = '\\';
  let index = 0;
  // Directives are only honoured at the very top, before any instruction, comment or blank line.
  const seen = new Set<string>();
  for (; index < lines.length; index += 1) {
    const match = DIRECTIVE.exec(lines[index]!);
    if (!match) break;
    const name = match[1]!.toLowerCase();
    if (seen.has(name)) break;
    seen.add(name);
    if (name === 'escape') {
      if (match[2] !== '\\' && match[2] !== '`') throw new DockerfileSyntaxError(index + 1, 'invalid escape');
      escape = match[2];
    }
  }
  if (options.escape) escape = options.escape;
  const continuation = new RegExp(`${escape === '`' ? '`' : '\\\\'}[ \\t]*$`);
  const instructions: Instruction[] = [];
  while (index < lines.length) {
    const first = lines[index]!;
    const start = index + 1;
    index += 1;
    const trimmed = first.trimStart();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    let logical = trimmed;
    let isContinued = continuation.test(logical);
    while (isContinued && index < lines.length) {
      logical = logical.replace(continuation, '');
      const next = lines[index]!;
      index += 1;
      const nextTrimmed = next.trimStart();
      // An empty or comment line inside a continuation is skipped; the continuation goes on.
      if (nextTrimmed === '' || nextTrimmed.startsWith('#')) continue;
      logical += next;
      isContinued = continuation.test(logical);
    }
    logical = logical.replace(continuation, '');
    instructions.push(toInstruction(logical, start));
  }
  return { escape, instructions };
}

export function toInstruction(logical: string, line: number): Instruction {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(logical.trim());
  const keyword = (match?.[1] ?? '').toUpperCase();
  let rest = match?.[2] ?? '';
  const flags = new Map<string, string>();
  // Flags only for instructions that take them; `RUN --x` is a command, but RUN's flags are
  // BuildKit-only and the classic builder refuses them anyway.
  if (['ADD', 'COPY', 'FROM', 'RUN', 'HEALTHCHECK'].includes(keyword)) {
    for (;;) {
      const flag = /^--([A-Za-z][A-Za-z0-9-]*)(?:=(\S*))?(?:\s+|$)/.exec(rest);
      if (!flag) break;
      flags.set(flag[1]!.toLowerCase(), flag[2] ?? '');
      rest = rest.slice(flag[0].length);
    }
  }
  const json = parseJsonArray(rest);
  return {
    keyword,
    line,
    flags,
    args: json ?? rest.split(/\s+/).filter((word) => word !== ''),
    isJson: json !== null,
    rest,
  };
}

function parseJsonArray(text: string): string[] | null {
  if (!text.trimStart().startsWith('[')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : null;
  } catch {
    return null;
  }
}

export class DockerfileSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'DockerfileSyntaxError';
  }
}
