#!/usr/bin/env bash
# The whole test suite (`npm test`): type-check and build, unit tests, e2e tests
# on the embedded SQLite default, then the e2e tests again on a PostgreSQL that
# this script starts itself (installing Debian's package when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== build (type-check) =="
npx nest build api

echo "== unit tests =="
npx jest --config jest.config.js --selectProjects unit --ci

echo "== e2e tests (SQLite) =="
npx jest --config jest.config.js --selectProjects e2e --ci --runInBand

if [ "${GATEWAY_TEST_SKIP_POSTGRES:-}" = "1" ]; then
  echo "== PostgreSQL pass not run: GATEWAY_TEST_SKIP_POSTGRES=1 =="
  exit 0
fi

echo "== e2e tests (PostgreSQL) =="
pgdir=$(mktemp -d /tmp/gateway-pg-XXXXXX)
trap 'scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
GATEWAY_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$pgdir")
export GATEWAY_TEST_POSTGRES_URL
npx jest --config jest.config.js --selectProjects e2e --ci --runInBand
