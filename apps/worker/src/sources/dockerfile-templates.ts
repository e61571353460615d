/**
 * Dockerfiles the ai analyzer generates for repositories that bring none. Base images come from
 * configuration (AI_BASE_IMAGE_*), so an operator can point them at an internal registry and
 * tests at local images. Every template listens on a fixed port that it also passes as PORT,
 * the convention most frameworks follow, and runs as an unprivileged user where the image allows.
 */
export interface BaseImages {
  node: string;
  python: string;
  go: string;
  goRuntime: string;
  static: string;
}

export interface GeneratedDockerfile {
  content: string;
  port: number;
  reasons: string[];
}

/** Where generated Dockerfiles are written in the checkout (a name no repository uses by accident). */
export const GENERATED_DOCKERFILE = '.hostctl.Dockerfile';

const cmd = (argv: string[]) => JSON.stringify(argv);

export function nodeDockerfile(
  image: string,
  pkg: { scripts?: Record<string, unknown>; main?: unknown },
  files: ReadonlySet<string>,
): GeneratedDockerfile {
  const reasons = ['package.json found: Node.js application'];
  let install = 'npm install';
  let run = ['npm'];
  if (files.has('pnpm-lock.yaml')) {
    install = 'corepack enable && pnpm install --frozen-lockfile';
    run = ['pnpm'];
    reasons.push('pnpm-lock.yaml: dependencies installed with pnpm');
  } else if (files.has('yarn.lock')) {
    install = 'corepack enable && yarn install --frozen-lockfile';
    run = ['yarn'];
    reasons.push('yarn.lock: dependencies installed with yarn');
  } else if (files.has('package-lock.json') || files.has('npm-shrinkwrap.json')) {
    install = 'npm ci';
    reasons.push('package-lock.json: dependencies installed with npm ci');
  } else {
    reasons.push('no lockfile: dependencies installed with npm install');
  }
  const scripts = pkg.scripts ?? {};
  const build = typeof scripts.build === 'string' ? `RUN ${run[0]} run build\n` : '';
  if (build) reasons.push('a build script exists: it runs during the image build');
  let start: string[];
  if (typeof scripts.start === 'string') {
    start = [...run, 'start'];
    reasons.push('started with its start script');
  } else {
    const main =
      typeof pkg.main === 'string' ? pkg.main : ['server.js', 'index.js', 'app.js'].find((f) => files.has(f));
    start = ['node', main ?? 'index.js'];
    reasons.push(`no start script: started with node ${main ?? 'index.js'}`);
  }
  return {
    port: 3000,
    reasons: [...reasons, 'listens on PORT=3000'],
    content: `FROM ${image}
WORKDIR /app
COPY . .
RUN ${install}
${build}ENV NODE_ENV=production PORT=3000
EXPOSE 3000
USER node
CMD ${cmd(start)}
`,
  };
}

export function pythonDockerfile(
  image: string,
  manifest: { file: 'requirements.txt' | 'pyproject.toml'; text: string },
  files: ReadonlySet<string>,
): GeneratedDockerfile {
  const reasons = [`${manifest.file} found: Python application`];
  const install =
    manifest.file === 'requirements.txt'
      ? 'pip install --no-cache-dir -r requirements.txt'
      : 'pip install --no-cache-dir .';
  // A dependency line of requirements.txt or an entry of pyproject's dependency list.
  const uses = (name: string) => new RegExp(`(^|[\\s"'[,])${name}\\b`, 'im').test(manifest.text);
  let start: string[];
  if (uses('uvicorn') && files.has('main.py')) {
    start = ['uvicorn', 'main:app', '--host', '0.0.0.0', '--port', '8000'];
    reasons.push('uvicorn and main.py: ASGI app main:app');
  } else if (uses('gunicorn') && files.has('app.py')) {
    start = ['gunicorn', '--bind', '0.0.0.0:8000', 'app:app'];
    reasons.push('gunicorn and app.py: WSGI app app:app');
  } else {
    const script = ['app.py', 'main.py', 'server.py'].find((f) => files.has(f)) ?? 'app.py';
    start = ['python', script];
    reasons.push(`started with python ${script}`);
  }
  return {
    port: 8000,
    reasons: [...reasons, 'listens on PORT=8000'],
    content: `FROM ${image}
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PORT=8000
COPY . .
RUN ${install}
EXPOSE 8000
USER 65534:65534
CMD ${cmd(start)}
`,
  };
}

export function goDockerfile(images: Pick<BaseImages, 'go' | 'goRuntime'>): GeneratedDockerfile {
  return {
    port: 8080,
    reasons: ['go.mod found: Go module built as a static binary', 'listens on PORT=8080'],
    content: `FROM ${images.go} AS build
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/app .
FROM ${images.goRuntime}
COPY --from=build /out/app /app
ENV PORT=8080
EXPOSE 8080
USER 65532:65532
ENTRYPOINT ["/app"]
`,
  };
}

/** busybox httpd serves the site; the generated Dockerfile itself is removed from the web root. */
export function staticDockerfile(image: string, root: string): GeneratedDockerfile {
  const source = root === '.' ? '.' : `${root}/`;
  return {
    port: 8080,
    reasons: [
      `${root === '.' ? 'index.html' : `${root}/index.html`} found: static site served by busybox httpd`,
      'listens on 8080',
    ],
    content: `FROM ${image}
COPY ${source} /www
RUN rm -f /www/${GENERATED_DOCKERFILE}
EXPOSE 8080
USER 65534:65534
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`,
  };
}
