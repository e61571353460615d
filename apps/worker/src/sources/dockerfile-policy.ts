import { type Instruction, parseDockerfile, toInstruction } from './dockerfile-parser.js';

/**
 * What a tenant Dockerfile may make the Docker daemon fetch. The daemon runs in the host's network
 * namespace, outside every egress rule, so anything it downloads on a build's behalf can reach the
 * control plane (`ADD http://127.0.0.1:2019/config/ /x` copied Caddy's admin config into an image).
 * RUN steps are fine: they run in a build container on the build network, under the egress policy.
 * So: no remote ADD sources (URLs, git), no `COPY --from=<image>` (an image pull that bypasses the
 * FROM check: use a named stage), heredocs refused (the classic builder does not implement them),
 * and every `FROM` image goes through `checkImage` (the image policy, when the worker has one).
 */
export type ImageCheck = (reference: string) => { ok: true } | { ok: false; reason: string };

export interface DockerfileVerdict {
  ok: boolean;
  /** `Dockerfile line 3: ADD from a URL …`; empty when ok. */
  problems: string[];
  /** Images the build will pull (FROM lines that name no earlier stage), variables expanded. */
  images: string[];
}

export function checkDockerfile(
  text: string,
  options: { name?: string; checkImage?: ImageCheck } = {},
): DockerfileVerdict {
  const name = options.name ?? 'Dockerfile';
  const problems: string[] = [];
  const images: string[] = [];
  let primary: Instruction[];
  let other: Instruction[];
  try {
    const parsed = parseDockerfile(text);
    primary = parsed.instructions;
    // Which escape character applies depends on directive rules that differ between engine
    // versions (20.10 stops at `# syntax=`, later ones do not). Checking the fetches under both
    // characters leaves no reading of the file in which a remote ADD hides in a continuation.
    other = parseDockerfile(text, { escape: parsed.escape === '\\' ? '`' : '\\' }).instructions;
  } catch (error) {
    return { ok: false, problems: [`${name} ${(error as Error).message}`], images };
  }
  const refuse = (instruction: Instruction, message: string) => {
    const problem = `${name} line ${instruction.line}: ${message}`;
    if (!problems.includes(problem)) problems.push(problem);
  };
  walk(primary, true);
  walk(other, false);
  return { ok: problems.length === 0, problems, images };

  /** `isPrimary`: also check and collect FROM images (only the reading the directives select). */
  function walk(instructions: Instruction[], isPrimary: boolean) {
    const globalArgs = new Map<string, string>();
    const stages: string[] = [];
    let stageCount = 0;

    const checkFetching = (instruction: Instruction, keyword: string) => {
      if (keyword === 'ADD') {
        for (const source of instruction.args.slice(0, -1)) {
          const problem = remoteSourceProblem(source);
          if (problem) refuse(instruction, `ADD ${problem}`);
        }
        if (instruction.flags.has('checksum'))
          refuse(instruction, 'ADD --checksum is for remote sources, which are not allowed');
      }
      if ((keyword === 'ADD' || keyword === 'COPY') && /(^|\s)<</.test(instruction.rest))
        refuse(instruction, `${keyword} heredocs are not supported by this builder`);
      if (keyword === 'COPY' && instruction.flags.has('from')) {
        const from = instruction.flags.get('from') ?? '';
        const isStage =
          stages.includes(from.toLowerCase()) || (/^\d+$/.test(from) && Number(from) < stageCount - 1);
        if (!isStage)
          refuse(
            instruction,
            `COPY --from=${from} names no earlier build stage; copying from an image is not allowed (declare it as a stage: FROM <image> AS <name>)`,
          );
      }
    };

    for (const instruction of instructions) {
      const { keyword } = instruction;
      if (keyword === 'ARG' && stageCount === 0) {
        for (const word of instruction.args) {
          // `ARG NAME` without a default stays unknown: no build args are passed, so it is empty.
          const [key, ...value] = word.split('=');
          if (key && value.length > 0) globalArgs.set(key, unquote(value.join('=')));
        }
      } else if (keyword === 'FROM') {
        const [reference = '', as, stage] = instruction.args;
        const image = expand(reference, globalArgs);
        const isStage = stages.includes(image.toLowerCase()) || image.toLowerCase() === 'scratch';
        if (!isStage && isPrimary) {
          images.push(image);
          if (image === '' || image.includes('$'))
            refuse(instruction, `FROM ${reference} uses a variable without a value`);
          const verdict = options.checkImage?.(image);
          if (verdict && !verdict.ok) refuse(instruction, `FROM ${image}: ${verdict.reason}`);
        }
        stageCount += 1;
        stages.push(as?.toLowerCase() === 'as' && stage ? stage.toLowerCase() : `\u0000${stageCount}`);
      } else if (keyword === 'ONBUILD') {
        // A trigger runs when a later stage builds FROM this one: the same rules apply to it.
        const inner = onbuildInstruction(instruction);
        if (inner.keyword === 'ONBUILD' || inner.keyword === 'FROM')
          refuse(instruction, `ONBUILD ${inner.keyword} is not allowed`);
        checkFetching(inner, inner.keyword);
      } else {
        checkFetching(instruction, keyword);
      }
    }
  }
}

/** The trigger of `ONBUILD <instruction>`, parsed as an instruction of its own on the same line. */
function onbuildInstruction(instruction: Instruction): Instruction {
  return toInstruction(instruction.rest, instruction.line);
}

/**
 * A source the daemon would download rather than read from the context. Quotes and escapes are
 * removed first (the builder strips them during word processing: `"http://x"` is a URL), and a
 * source with a variable is refused outright: its value is only known inside the builder.
 */
function remoteSourceProblem(raw: string): string | null {
  const source = raw.replace(/["'\\`]/g, '');
  if (source.includes('$'))
    return `source ${raw} uses a variable; ADD sources must be literal files of the repository`;
  if (source.includes('://') || /^[a-z][a-z0-9+.-]*:/i.test(source) || /^[^/]*@[^/]*:/.test(source))
    return `from a URL (${raw}) is not allowed: the builder would download it from the host's network; download it in a RUN step or commit the file`;
  return null;
}

function unquote(value: string): string {
  return value.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
}

/** `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME:+alt}` with the global ARG defaults. */
function expand(word: string, args: Map<string, string>): string {
  return word.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced?: string, op?: string, alt?: string, bare?: string) => {
      const key = braced ?? bare ?? '';
      const value = args.get(key);
      if (op === '-') return value ? value : (alt ?? '');
      if (op === '+') return value ? (alt ?? '') : '';
      return value ?? whole;
    },
  );
}
