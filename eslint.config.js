// ESLint: typescript-eslint's type-aware recommended rules on the TypeScript, plain recommended
// rules on the migrations (JavaScript, outside tsconfig.json), and import cycles as errors
// everywhere. `npm run lint`; CI runs it (.ci/run).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import globals from 'globals';

export default tseslint.config(
  // console/ is the front-end with its own tsconfig and build; this config covers the service.
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'bench/results/', 'console/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `_name` marks a binding kept on purpose: Express tells an error handler by its four
      // parameters, and `{ [k]: _drop, ...rest }` is how a key is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A caught error is passed on as it is (typed unknown/any): wrapping it would lose its class.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
      // Store classes implement a Promise-returning interface with synchronous bodies (the
      // in-process store); `async` there keeps a throw a rejection. Forgotten awaits, the bug
      // this rule is after, are caught by no-floating-promises and no-misused-promises.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests, benchmarks and the demo-data generator read HTTP response bodies (supertest's `body`
    // is `any`), query rows and JSON fixtures, and use or assert on them field by field: the
    // assertion (or the service answering) is the type check there, so the no-unsafe-* rules,
    // which would demand a cast before every `res.body.x`, are off for them; never for src/.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'seeds/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    plugins: { 'import-x': importX },
    settings: {
      // The plugin's TypeScript preset: how to parse a .ts dependency (no-cycle reads each one).
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      // A cycle makes module initialisation order matter and layers impossible to read apart.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // Layers (docs/ARCHITECTURE.md, "Layers"): the translator is near the ground. It reads what it
    // knows of the log tables from its own contract (src/sql/catalog.ts), which the service fills
    // in, and imports nothing of the service but the input limits. Between the folders of src/,
    // no cycle at all: scripts/folder-cycles.ts, the other half of `npm run lint`.
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/sql',
              from: './src',
              except: ['./sql', './inputLimits.ts'],
              message: 'src/sql is the translator: it takes its input through src/sql/catalog.ts and imports nothing of the service.',
            },
            {
              target: ['./src/errors.ts', './src/inputLimits.ts'],
              from: './src',
              except: ['./errors.ts', './inputLimits.ts'],
              message: 'errors and input limits are imported by every layer and import nothing of the service.',
            },
          ],
        },
      ],
    },
  },
);
