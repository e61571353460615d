// Type-aware lint for the whole monorepo, plus the dependency direction of docs/style.md:
// apps import packages, packages never import apps, apps never import each other.
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const appNames = ['api', 'worker', 'cli', 'dev-idp', 'web'];
const TEST_CODE = ['**/*.test.ts', '**/testing/**', '**/test-support/**'];

// Boundaries the layout promises (README, docs/style.md). ESLint replaces a rule's options rather than
// merging them, so each area below lists every pattern that applies to it.
const NO_APPS = {
  group: ['**/apps/**', ...appNames.map((a) => `@hostctl/${a}`)],
  message: 'packages, tests and bench never import app internals (start apps as processes instead)',
};
const NO_DATABASE_DRIVERS = {
  group: ['@prisma/*', 'pg', 'pg-*', '**/generated/**'],
  message: 'Prisma and pg live only in packages/db: use its stores',
};
const NO_ENGINE_CLIENTS = {
  group: ['dockerode', 'docker-modem', 'simple-git'],
  message: 'dockerode and simple-git live only in apps/worker/src/adapters: use the runtime/git interfaces',
};
const NO_TEST_HELPERS = { group: ['@hostctl/testing'], message: 'test helpers stay in test code' };
const noCrossApp = (self) => ({
  group: [
    '**/apps/*',
    ...appNames.filter((a) => a !== self).flatMap((a) => [`@hostctl/${a}`, `**/${a}/src/**`]),
  ],
  message: 'apps never import other apps',
});
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/generated/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      '**/vitest.config.ts',
      'vitest.workspace.ts',
      'prisma.config.ts',
      'apps/web/dist/**',
      'packages/api-client/src/schema.d.ts',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['packages/**/*.ts'],
    ignores: ['packages/db/**', 'packages/testing/**', ...TEST_CODE],
    rules: restrict(NO_APPS, NO_DATABASE_DRIVERS, NO_ENGINE_CLIENTS, NO_TEST_HELPERS),
  },
  { files: ['packages/db/**/*.ts', 'packages/testing/**/*.ts'], rules: restrict(NO_APPS) },
  {
    files: ['packages/domain/**/*.ts'],
    ignores: TEST_CODE,
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^[^.]', message: 'domain imports nothing' }] },
      ],
    },
  },
  ...appNames.map((app) => ({
    files: [`apps/${app}/**/*.ts`, `apps/${app}/**/*.tsx`],
    ignores: TEST_CODE,
    rules: restrict(noCrossApp(app), NO_TEST_HELPERS, NO_DATABASE_DRIVERS, NO_ENGINE_CLIENTS),
  })),
  {
    files: ['apps/worker/src/adapters/**/*.ts'],
    ignores: TEST_CODE,
    rules: restrict(noCrossApp('worker'), NO_TEST_HELPERS, NO_DATABASE_DRIVERS),
  },
  ...appNames.map((app) => ({
    files: TEST_CODE.map((pattern) => `apps/${app}/${pattern}`),
    rules: restrict(noCrossApp(app)),
  })),
  { files: ['bench/**/*.ts', 'tests/**/*.ts'], rules: restrict(NO_APPS) },
  // The dashboard: the rules of hooks; packages only through browser-safe entry points.
  {
    files: ['apps/web/**/*.tsx', 'apps/web/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  // docs/style.md: files under 300 lines, split before 400.
  { files: ['**/*.ts', '**/*.tsx'], rules: { 'max-lines': ['error', { max: 400 }] } },
  {
    files: ['**/*.test.ts', 'bench/**/*.ts', 'tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
