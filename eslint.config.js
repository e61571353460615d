// Type-aware lint for the whole monorepo, plus the dependency direction of STYLE.md:
// apps import packages, packages never import apps, apps never import each other.
import tseslint from 'typescript-eslint';

const appNames = ['api', 'worker', 'cli', 'dev-idp'];
const noCrossApp = (self, { inTests }) => ({
  patterns: [
    {
      group: ['**/apps/*', ...appNames.filter((a) => a !== self).map((a) => `@hostctl/${a}`)],
      message: 'apps never import other apps',
    },
    ...(inTests ? [] : [{ group: ['@hostctl/testing'], message: 'test helpers stay in test code' }]),
  ],
});
const TEST_CODE = ['**/*.test.ts', '**/testing/**', '**/test-support/**'];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/generated/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      '**/vitest.config.ts',
      'vitest.workspace.ts',
      'prisma.config.ts',
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
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/apps/**', '@hostctl/api', '@hostctl/worker', '@hostctl/cli', '@hostctl/dev-idp'],
              message: 'packages never import apps',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^[^.]', message: 'domain imports nothing' }] },
      ],
    },
  },
  ...appNames.map((app) => ({
    files: [`apps/${app}/**/*.ts`],
    ignores: TEST_CODE,
    rules: { 'no-restricted-imports': ['error', noCrossApp(app, { inTests: false })] },
  })),
  ...appNames.map((app) => ({
    files: TEST_CODE.map((pattern) => `apps/${app}/${pattern}`),
    rules: { 'no-restricted-imports': ['error', noCrossApp(app, { inTests: true })] },
  })),
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
