/**
 * Three tiers: unit tests beside the code; medium tests (`*.medium-spec.ts`, beside the code too) running each case on a
 * real SQLite and a real PostgreSQL, which the project's global setup starts; e2e tests through HTTP against the real bootstrap.
 */
const moduleNameMapper = {
  '^@gateway/([^/]+)$': '<rootDir>/libs/$1/src', // tsconfig: "@gateway/*": ["libs/*/src"]
  '^@gateway/connector-s3/params$': '<rootDir>/libs/connector-s3/src/params', // a declared sub-entry
};
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] };

module.exports = {
  testTimeout: 60_000,
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'],
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'medium',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/apps/**/*.medium-spec.ts', '<rootDir>/libs/**/*.medium-spec.ts'],
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
      moduleNameMapper,
      globalSetup: '<rootDir>/test/medium/global-setup.ts',
      globalTeardown: '<rootDir>/test/medium/global-teardown.ts',
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts', '<rootDir>/test/contract/**/*.e2e-spec.ts', '<rootDir>/test/browser/**/*.e2e-spec.ts', '<rootDir>/test/docker/**/*.e2e-spec.ts'],
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
      moduleNameMapper,
    },
  ],
};
