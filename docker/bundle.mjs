// Build stage of the container images: bundles each app's TypeScript entry points with esbuild into
// one ES module per entry, so an image carries only the code production reaches (no tsx, no
// TypeScript, no dev dependencies) and starts without compiling anything.
//
// Usage: node docker/bundle.mjs OUT_DIR APP...   (run from the repository root, after `pnpm install`
// and `pnpm db:generate`). For each APP it writes OUT_DIR/APP/, laid out as /app in the image:
//   apps/APP/dist/*.mjs  the bundles (+ source maps; run node with --enable-source-maps)
//   node_modules/        packages that cannot be bundled (native addons, static files) with their deps
//   templates/, prisma/migrations/, …  data files the code reads at run time
// The bundles sit three levels below /app, exactly like their sources (packages/x/src/y.ts), so
// paths resolved from import.meta.url ("../../../templates") still land on /app/templates.
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const APPS = {
  api: {
    // The API image also carries the one-shot tools operators run next to it: migrations and the
    // bootstrap CLI (first admin, API keys).
    entries: {
      main: 'apps/api/src/main.ts',
      migrate: 'apps/api/src/migrate.ts',
      cli: 'apps/cli/src/main.ts',
    },
    // sodium-native loads a prebuilt addon at run time; swagger-ui-dist is static files served as is.
    external: ['sodium-native'],
    assets: {
      'swagger-ui-dist': [
        'package.json',
        'LICENSE',
        'swagger-ui.css',
        'swagger-ui-bundle.js',
        'favicon-32x32.png',
      ],
    },
    files: ['templates', 'prisma/migrations'],
  },
  worker: {
    entries: { main: 'apps/worker/src/main.ts' },
    external: [],
    // docker-modem's ssh:// transport: the worker reaches its engines through unix sockets only,
    // and ssh2 alone costs 16 MiB of idle memory (docker/stubs/ssh2.cjs says why).
    stubs: { ssh2: 'docker/stubs/ssh2.cjs' },
    assets: {},
    files: ['templates'],
  },
  // The CI image: the API client alone. client-main.ts leaves out the operator commands, so no
  // database client (Prisma) is bundled; ws's optional native speed-ups are never installed here.
  cli: {
    entries: { hostctl: 'apps/cli/src/client-main.ts' },
    external: [],
    assets: {},
    files: [],
  },
  'dev-idp': {
    entries: { main: 'apps/dev-idp/src/main.ts' },
    external: [],
    assets: {},
    files: ['apps/dev-idp/accounts.json'],
  },
};

// CommonJS dependencies inside an ES module bundle still call require() and read __dirname.
const BANNER = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  "import { dirname as __bundleDirname } from 'node:path';",
  'const require = __bundleCreateRequire(import.meta.url);',
  'const __filename = __bundleFileURLToPath(import.meta.url);',
  'const __dirname = __bundleDirname(__filename);',
].join('\n');

const root = process.cwd();
const [outArg, ...names] = process.argv.slice(2);
if (!outArg || names.length === 0 || names.some((name) => !(name in APPS))) {
  console.error(`usage: node docker/bundle.mjs OUT_DIR ${Object.keys(APPS).join('|')}...`);
  process.exit(2);
}
const out = path.resolve(outArg);

/** Node's lookup of package NAME from directory FROM (pnpm keeps a package's deps beside it). */
function findPackage(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate =
      path.basename(dir) === 'node_modules' ? path.join(dir, name) : path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dir === path.dirname(dir)) return null;
  }
}

/** Copies a package and, recursively, its dependencies into DEST/node_modules (flat). */
function copyPackageTree(name, from, dest, seen = new Set()) {
  if (seen.has(name)) return;
  const dir = findPackage(name, from);
  if (dir === null) throw new Error(`cannot find package ${name} from ${from}`);
  seen.add(name);
  const platform = `${process.platform}-${process.arch}`;
  cpSync(dir, path.join(dest, 'node_modules', name), {
    recursive: true,
    dereference: true,
    // Prebuilt addons for other platforms are dead weight.
    filter: (source) => !/[\\/]prebuilds[\\/][^\\/]+$/.test(source) || source.endsWith(platform),
  });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    if (findPackage(dep, dir) !== null) copyPackageTree(dep, dir, dest, seen);
  }
}

async function bundleApp(name) {
  const app = APPS[name];
  const dest = path.join(out, name);
  rmSync(dest, { recursive: true, force: true });
  const appDir = path.join(root, 'apps', name);
  // Externals are found from whichever package imports them, so they resolve as they did in dev.
  const importers = new Map();
  const externals = {
    name: 'externals',
    setup(builder) {
      for (const [pkg, stub] of Object.entries(app.stubs ?? {})) {
        builder.onResolve({ filter: new RegExp(`^${pkg}$`) }, () => ({ path: path.join(root, stub) }));
      }
      const names = app.external;
      if (names.length === 0) return;
      const filter = new RegExp(
        `^(${names.map((pkg) => pkg.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`,
      );
      builder.onResolve({ filter }, (args) => {
        importers.set(args.path, args.resolveDir);
        return { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.entries(app.entries).map(([out, input]) => ({ in: input, out })),
    outdir: path.join(dest, 'apps', name, 'dist'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Entries of one image share their common code as chunks (beside them, so paths still hold).
    splitting: true,
    chunkNames: 'chunk-[hash]',
    platform: 'node',
    target: 'node20',
    format: 'esm',
    banner: { js: BANNER },
    plugins: [externals],
    sourcemap: 'linked',
    minifySyntax: true,
    minifyWhitespace: true,
    // Fastify plugins and error classes are identified by name.
    keepNames: true,
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  for (const pkg of app.external) {
    if (!importers.has(pkg))
      throw new Error(`${name}: external ${pkg} is never imported; remove it from the list`);
    copyPackageTree(pkg, importers.get(pkg), dest);
  }
  for (const [pkg, files] of Object.entries(app.assets)) {
    const dir = findPackage(pkg, appDir);
    if (dir === null) throw new Error(`cannot find package ${pkg}`);
    for (const file of files) cpSync(path.join(dir, file), path.join(dest, 'node_modules', pkg, file));
  }
  for (const file of app.files) cpSync(path.join(root, file), path.join(dest, file), { recursive: true });
  mkdirSync(dest, { recursive: true });
  writeFileSync(
    path.join(dest, 'package.json'),
    `${JSON.stringify({ name: `hostctl-${name}`, private: true, type: 'module' })}\n`,
  );
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  console.log(
    `${name}: ${Object.keys(app.entries).join(', ')} → ${path.relative(root, dest) || dest} (${(bytes / 1e6).toFixed(1)} MB)`,
  );
}

for (const name of names) await bundleApp(name);
