/**
 * The images a Dockerfile makes the engine pull or read: `FROM` lines and `COPY --from=<image>`.
 * A tenant's Dockerfile is tenant input like a compose `image:`: `FROM hostctl/<other>:<commit>`
 * would build on another service's image (its files included), and `FROM 127.0.0.1:2019/x` would
 * make the engine call the Caddy admin API. The build step passes every image found here through
 * the image policy before the engine sees the Dockerfile.
 *
 * Build arguments are never passed to builds, so a `$VAR` in FROM can only take the default of a
 * global `ARG` (declared before the first FROM): those are substituted; anything still unresolved
 * is reported as a problem rather than guessed.
 */
export interface DockerfileImages {
  images: string[];
  problems: string[];
}

export function dockerfileImages(text: string): DockerfileImages {
  const images: string[] = [];
  const problems: string[] = [];
  const stages = new Set<string>();
  const args = new Map<string, string>();
  let seenFrom = false;
  for (const instruction of instructions(text)) {
    const [keyword = '', ...rest] = instruction.split(/\s+/);
    const word = keyword.toUpperCase();
    if (word === 'ARG' && !seenFrom) {
      for (const declaration of rest) {
        const [name = '', ...value] = declaration.split('=');
        args.set(name, unquote(value.join('=')));
      }
    } else if (word === 'FROM') {
      seenFrom = true;
      const tokens = rest.filter((token) => !token.startsWith('--'));
      const image = substitute(tokens[0] ?? '', args);
      if (tokens[1]?.toUpperCase() === 'AS' && tokens[2]) stages.add(tokens[2].toLowerCase());
      consider(image, `FROM ${tokens[0] ?? ''}`);
    } else if (word === 'COPY' || word === 'ADD') {
      for (const flag of rest.filter((token) => /^--from=/i.test(token)))
        consider(substitute(flag.slice('--from='.length), args), flag);
    }
  }
  return { images: [...new Set(images)], problems };

  function consider(image: string | null, written: string): void {
    if (image === null) {
      problems.push(`${written} uses a variable that is not a global ARG with a default`);
      return;
    }
    const name = image.toLowerCase();
    if (name === 'scratch' || stages.has(name) || /^[0-9]+$/.test(name)) return;
    images.push(image);
  }
}

/** Logical lines: continuations joined, comments and parser directives dropped. */
function instructions(text: string): string[] {
  const escape = /^#\s*escape\s*=\s*`/im.test(text.split('\n').slice(0, 5).join('\n')) ? '`' : '\\';
  const out: string[] = [];
  let current = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (current !== '' && line.startsWith('#')) continue;
    if (line.endsWith(escape)) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    out.push((current + line).trim());
    current = '';
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

/** `$A`, `${A}`, `${A:-d}`, `${A:+x}` from the global ARGs; null when something stays unresolved. */
function substitute(value: string, args: ReadonlyMap<string, string>): string | null {
  const result = value.replace(
    /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (
      match,
      braced: string | undefined,
      op: string | undefined,
      word: string | undefined,
      bare: string | undefined,
    ) => {
      const name = braced ?? bare ?? '';
      if (!args.has(name)) return match;
      const current = args.get(name) ?? '';
      if (op === '-') return current !== '' ? current : (word ?? '');
      if (op === '+') return current !== '' ? (word ?? '') : '';
      return current;
    },
  );
  return result.includes('$') ? null : result;
}

function unquote(value: string): string {
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}
