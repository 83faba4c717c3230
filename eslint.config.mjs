// Lint and layering (ARCHITECTURE.md, "Layering and lint"). `npm run lint`; `npm test` runs it after the build.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

// TEMPORARY: owned by parallel work, removed at merge.
const parallelWork = [
  'libs/raw-http/**',
  'libs/microsoft-client/**',
  'libs/connector-s3/src/{raw-get-object,object-reader,client}.ts',
  'libs/connector-cmis/src/cmis-client*.ts',
  'libs/connector-{cmis,sharepoint,graph,s3}/src/*.connector.ts',
  'libs/persistence/src/jobs.repository.ts',
  'libs/connector-filesystem/**',
  'libs/connector-api/src/{capabilities,connector}.ts',
  'apps/api/src/jobs/{document-copier,job-executor}.ts',
  'apps/api/src/metrics/instrument-connector.ts',
  'apps/api/src/common/{v8-collector,body-collections,idle-heap-trim,raw-body,incoming-content,response-body}.ts',
  'apps/api/src/bootstrap.ts',
  'apps/api/src/main.ts',
  'apps/api/src/files/{native-crc32,batch-zip,export-runner,public-rate-limit.guard}.ts',
  'apps/api/src/auth/**',
  'apps/api/src/coordination/**',
  'libs/concurrency/**',
  'apps/api/src/connectors/**',
  'libs/connector-*/src/index.ts',
  'bench/**',
  // the spec of raw-get-object.ts, edited with it
  'libs/connector-s3/src/raw-get-object.spec.ts',
];

/** A lib's public entries: its index, and the sub-entries tsconfig.json declares (`@gateway/<lib>/<entry>`). */
const SUB_ENTRIES = { 'connector-s3': ['params'] };
const publicEntries = (lib) => [`./${lib}/src/index.ts`, ...(SUB_ENTRIES[lib] ?? []).map((entry) => `./${lib}/src/${entry}.ts`)];

/** The libs each lib may import: the lib graph, acyclic by construction. Drivers are leaves the app loads. */
const DRIVER_DEPENDENCIES = ['errors', 'concurrency', 'raw-http', 'search-query', 'microsoft-client', 'connector-api'];
const LIB_DEPENDENCIES = {
  errors: [],
  concurrency: [],
  'raw-http': [],
  'text-extraction': [],
  persistence: ['concurrency'],
  'search-query': ['errors'],
  'microsoft-client': ['errors', 'raw-http'],
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
  { ignores: [...parallelWork, 'dist/**', 'coverage/**', 'reports/**', '.stryker-tmp*/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
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
      // A leading underscore marks a parameter an interface requires but this implementation does not read.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { zones: [...layering, { target: ['./apps', './libs'], from: './test', message: 'Shipped code never imports test code.' }] },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
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
    },
  },
);
