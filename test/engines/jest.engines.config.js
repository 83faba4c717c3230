/**
 * Runs the real-engine smoke tests on their own:
 *   npx jest -c test/engines/jest.engines.config.js
 * GATEWAY_TEST_ENGINES=solr,postgres selects engines (default all).
 */
const path = require('node:path');

const rootDir = path.resolve(__dirname, '../..');

module.exports = {
  rootDir,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/engines/**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  // The smoke tests use the Microsoft simulators through @gateway/microsoft-client (as the root config maps it).
  moduleNameMapper: { '^@gateway/([^/]+)$': '<rootDir>/libs/$1/src' },
  globalSetup: '<rootDir>/test/engines/global-setup.ts',
  globalTeardown: '<rootDir>/test/engines/global-teardown.ts',
  testTimeout: 60_000,
};
