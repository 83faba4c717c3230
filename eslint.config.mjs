// Lint and layering (ARCHITECTURE.md, "Layering and lint"). `npm run lint`; `npm test` runs it after the build.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

/** A lib's public entries: its index, and the sub-entries tsconfig.json declares (`@gateway/<lib>/<entry>`). */
const SUB_ENTRIES = { 'connector-s3': ['params'] };
const publicEntries = (lib) => [`./${lib}/src/index.ts`, ...(SUB_ENTRIES[lib] ?? []).map((entry) => `./${lib}/src/${entry}.ts`)];

/** The libs each lib may import: the lib graph, acyclic by construction. Drivers are leaves the app loads. */
const DRIVER_DEPENDENCIES = ['errors', 'concurrency', 'content-transport', 'search-query', 'microsoft-client', 'connector-api'];
const LIB_DEPENDENCIES = {
  errors: [],
  concurrency: [],
  'content-transport': [],
  'text-extraction': [],
  persistence: ['concurrency'],
  'search-query': ['errors'],
  'microsoft-client': ['errors', 'content-transport'],
  'connector-api': ['errors', 'search-query'],
};
const libs = readdirSync(new URL('./libs', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const dependenciesOf = (lib) => {
  if (LIB_DEPENDENCIES[lib]) return LIB_DEPENDENCIES[lib];
  if (lib.startsWith('connector-')) return DRIVER_DEPENDENCIES;
  throw new Error(`eslint.config.mjs: add libs/${lib} to LIB_DEPENDENCIES`);
};

const layering = [
  { target: './libs', from: './apps', message: 'libs never import the gateway app.' },
  {
    target: './apps',
    from: './libs',
    except: libs.flatMap(publicEntries),
    message: "Import a lib through its public entry ('@gateway/<lib>'), not a file inside its src/.",
  },
  ...libs.map((lib) => ({
    target: `./libs/${lib}`,
    from: './libs',
    except: [`./${lib}`, ...dependenciesOf(lib).flatMap(publicEntries)],
    message: `libs/${lib} imports only ${dependenciesOf(lib).join(', ') || 'no other lib'} (LIB_DEPENDENCIES), each through its public entry ('@gateway/<lib>').`,
  })),
  {
    target: './apps/api/src/config',
    from: './apps/api/src',
    except: ['./config'],
    message: 'config/ is read by every module and imports none of them.',
  },
  { target: ['./apps', './libs'], from: ['./apps/*/test/**', './libs/*/test/**'], message: 'Test helpers live in test/support/.' },
];

export default tseslint.config(
  { ignores: ['bench/**', 'dist/**', 'coverage/**', 'reports/**', '.stryker-tmp*/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    settings: {
      // import-x reads the TypeScript files an import leads to (for no-cycle) with typescript-eslint's parser.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [
        // unrs-resolver reads tsconfig.json's paths, so '@gateway/<lib>' resolves to libs/<lib>/src/index.ts.
        createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'], tsconfig: { configFile: `${import.meta.dirname}/tsconfig.json` } }),
      ],
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones: layering }],
      // Promise-returning interfaces (connectors, stores, queues) are implemented by async methods so that a throw
      // becomes a rejection, awaited or not.
      '@typescript-eslint/require-await': 'off',
      // Names, ids and headers are checked for control characters on purpose, by regular expressions that list them.
      'no-control-regex': 'off',
      // A caught or callback error is passed on as it came: wrapping it would lose its type for the exception filter.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      // A leading underscore marks a parameter an interface requires but this implementation does not read.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.medium-spec.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { zones: [...layering, { target: ['./apps', './libs'], from: './test', message: 'Shipped code never imports test code.' }] },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts', '**/*.medium-spec.ts'],
    rules: {
      // HTTP answers (supertest's res.body), JSON.parse and engine replies are `any`: tests assert their shape.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // expect(fake.method).toHaveBeenCalled() hands jest the method unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // Test servers' async request handlers: an error fails the test's request, which is what it checks.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
);
