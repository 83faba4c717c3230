#!/usr/bin/env bash
# The whole test suite (`npm test`):
#   1. type-check and build, then lint (eslint.config.mjs); 2. unit tests, then medium tests (*.medium-spec.ts: each case
#      on a real SQLite and a real PostgreSQL, which the jest project's global setup starts through test/engines);
#   3. the real engines' smoke tests (CMIS, Solr, Elasticsearch, OpenSearch, FerretDB, PostgreSQL, Redis, Tika, ...,
#      provisioned from Maven Central, the Go module proxy and Debian; builds cached between runs);
#   4. e2e tests on the embedded SQLite default (the contract suite includes the real CMIS server;
#      test/e2e/proxy*, offload*, test/browser run Debian's nginx and chromium; test/docker the Dockerfile's steps);
#   4b. Schemathesis over the built gateway's OpenAPI document, as admin and as a user, on one connector of every kind the
#       harness starts cheaply (test/fuzz: two filesystems, MinIO, CMIS, SharePoint, Graph, MongoDB on FerretDB; needs python3);
#   5. the job suites (test/e2e/jobs*) again in Redis (BullMQ) mode, on a Redis this script starts;
#   6. e2e tests again on a PostgreSQL this script starts (less the search contract; test/e2e/faults-jobs
#      and test/e2e/faults, Toxiproxy between the gateway and each engine, run here only), and the job
#      suites on PostgreSQL + Redis.
# Only the job suites, the crash matrix's job case and test/e2e/multinode (three gateway nodes: lock-out, cache invalidation, exports,
# links, jobs across nodes; its export tests once per user-file store: a shared folder, then S3 on S3Proxy and on MinIO, which
# it starts itself, each node with only its own data folder) have a Redis pass.
# Needs Node 20, Java 17 + Maven, Go; installs Debian's postgresql/redis-server when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."

# jobs-webhooks spends three of its three and a half minutes waiting out an endpoint that is down (its deliveries
# retried): it runs beside the pass it belongs to, in a jest process of its own, its output printed when it ends.
# Its gateways use their own databases and data folders, and so their own BullMQ queues (the prefix is the database's).
webhooks_log=$(mktemp /tmp/gateway-test-webhooks-XXXXXX.log)
webhooks_pid=
# A pass that fails ends the script: the run beside it goes too.
webhooks_stop() {
  if [ -n "$webhooks_pid" ]; then kill "$webhooks_pid" 2>/dev/null || true; fi
  rm -f "$webhooks_log"
}
trap webhooks_stop EXIT
webhooks_beside() {
  node_modules/.bin/jest --config jest.config.js --selectProjects e2e --ci --runInBand test/e2e/jobs-webhooks > "$webhooks_log" 2>&1 &
  webhooks_pid=$!
}
webhooks_joined() {
  local status=0
  wait "$webhooks_pid" || status=$?
  webhooks_pid=
  echo "-- jobs-webhooks, run beside this pass --"
  cat "$webhooks_log"
  return $status
}

# The full run needs every engine: with a selection, the tests of the others would fail, naming the engines left out.
# (The global setup fails the run when a selected engine does not start.)
if [ -n "${GATEWAY_TEST_ENGINES:-}" ]; then
  echo "npm test runs every engine: unset GATEWAY_TEST_ENGINES (now '${GATEWAY_TEST_ENGINES}')" >&2
  exit 1
fi

echo "== build (type-check) =="
npx nest build api

echo "== lint =="
# typescript-eslint with type information, and the layering rules (ARCHITECTURE.md, "Layering and lint")
npx eslint .

echo "== unit tests =="
npx jest --config jest.config.js --selectProjects unit --ci

echo "== medium tests (SQLite and PostgreSQL) =="
# Not skipped by GATEWAY_TEST_SKIP_POSTGRES: the repositories and the job engine always meet both databases.
npx jest --config jest.config.js --selectProjects medium --ci

echo "== real engines: smoke tests =="
npx jest -c test/engines/jest.engines.config.js --ci --runInBand

echo "== e2e tests (SQLite) =="
# multinode: three nodes on PostgreSQL + Redis, run once, in the last pass. faults (Toxiproxy between the
# gateway and CMIS, Solr, Elasticsearch, OpenSearch, FerretDB, its PostgreSQL and Redis) brings its own database and
# Redis through the proxies whatever the pass: both run once, in the PostgreSQL pass.
# jobs-sync's acceptance (issue 36: 10,000 documents fs → CMIS, then the change set) runs at full size in this pass
# only (a few minutes of CMIS writes), at 500 in the others.
webhooks_beside
SYNC_ACCEPTANCE_DOCS=10000 npx jest --config jest.config.js --selectProjects e2e --ci --runInBand --testPathIgnorePatterns multinode test/e2e/faults jobs-webhooks
webhooks_joined

echo "== soak, 30 s (bench/soak.js: exits non-zero on any 5xx, connection error or upload not read back intact) =="
# The kill -9 matrix (test/e2e/crash-matrix, one round over its kill points, CRASH_SEED 41) runs inside the e2e passes; the soak once, embedded default.
SOAK_SECONDS=${SOAK_SECONDS:-30} node bench/run.js soak

echo "== outside fuzzing: Schemathesis over /api/docs-json (admin and user) =="
test/fuzz/schemathesis.sh

services=$(mktemp -d /tmp/gateway-test-services-XXXXXX)
chmod 755 "$services" # PostgreSQL runs as the unprivileged postgres user and must reach its folder
cleanup() {
  webhooks_stop
  scripts/redis.sh stop "$services/redis" || true
  scripts/postgres.sh stop "$services/pg" || true
  rm -rf "$services"
}
trap cleanup EXIT

echo "== job e2e tests (SQLite + Redis/BullMQ) =="
redis_url=$(scripts/redis.sh start "$services/redis")
# jobs-webhooks (3½ min: an endpoint down for 3 minutes) runs twice: embedded on SQLite (the e2e pass above) and on PostgreSQL + BullMQ (the last pass).
# jobs-names (200 hostile names through four targets and back, ~50 s), jobs-version-stamps (each version's dates and
# authors at every target kind) and jobs-version-chain (30 versions through four repositories, ~16 s) test what a copy
# writes at the target, not how its tasks are queued: they run in the embedded passes (SQLite, and PostgreSQL but
# jobs-names), not in the BullMQ ones.
queue_independent="jobs-names jobs-version-stamps jobs-version-chain"
GATEWAY_TEST_REDIS_URL=$redis_url npx jest --config jest.config.js test/e2e/jobs test/e2e/crash-matrix --selectProjects e2e --ci --runInBand --testPathIgnorePatterns jobs-webhooks $queue_independent

if [ "${GATEWAY_TEST_SKIP_POSTGRES:-}" = "1" ]; then
  echo "== PostgreSQL passes not run: GATEWAY_TEST_SKIP_POSTGRES=1 =="
  exit 0
fi

echo "== e2e tests (PostgreSQL) =="
GATEWAY_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$services/pg")
export GATEWAY_TEST_POSTGRES_URL
# The search contract reads no table but users: its SQLite pass covers it, and it is the slowest file.
# proxy-large and test/docker start the built gateway on its own SQLite, and the browser test reads
# only users: the first pass covers them, and they are the slowest after it. The SharePoint
# large-transfer and fidelity files, text extraction (Tika), and the S3 multipart writer and user-file
# store files (the lib classes on the engines, no gateway) touch no table at all. jobs-names (200 hostile names
# through four targets and back, ~80 s) tests the names a copy writes at its targets; its records go through the
# same repositories as every job's, which the medium tests and the other job files run on PostgreSQL.
npx jest --config jest.config.js --selectProjects e2e --ci --runInBand --testPathIgnorePatterns search.contract proxy-large test/docker test/browser multinode sharepoint-large sharepoint-fidelity text-extraction s3-multipart-writer s3-user-file-store jobs-webhooks jobs-names

echo "== job e2e tests and three nodes (PostgreSQL + Redis/BullMQ) =="
export GATEWAY_TEST_REDIS_URL=$redis_url
webhooks_beside
npx jest --config jest.config.js test/e2e/jobs test/e2e/multinode --selectProjects e2e --ci --runInBand --testPathIgnorePatterns $queue_independent jobs-webhooks
webhooks_joined
