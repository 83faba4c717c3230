'use strict';
// Throughput of authenticated GET /api/repo/connections against the same route
// with authentication switched off (GATEWAY_AUTH_DISABLED=true), both measured
// in this run, alternating rounds so drift hits both sides. Target ratio >= 0.8.
const autocannon = require('autocannon');
const { startGateway, median, printResult, printVerdict, benchmark } = require('./lib/harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 20);

function load(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0) return reject(new Error(`${result.non2xx} non-2xx answers from ${url}`));
      resolve(result.requests.average);
    });
  });
}

async function main() {
  const secured = await startGateway();
  const open = await startGateway({ GATEWAY_AUTH_DISABLED: 'true' });
  try {
    const path = '/api/repo/connections';
    // Warm-up: JIT, and the first argon2 verification that fills the cache.
    await load(secured.baseUrl + path, { Authorization: secured.auth });
    await load(open.baseUrl + path, {});
    const withAuth = [];
    const withoutAuth = [];
    for (let i = 0; i < ROUNDS; i++) {
      withAuth.push(await load(secured.baseUrl + path, { Authorization: secured.auth }));
      withoutAuth.push(await load(open.baseUrl + path, {}));
    }
    const ratio = median(withAuth) / median(withoutAuth);
    printResult('auth-overhead', {
      authenticated_rps: median(withAuth),
      unauthenticated_rps: median(withoutAuth),
      ratio,
    });
    return printVerdict('auth-overhead', ratio >= 0.8, 'authenticated/unauthenticated throughput >= 0.8');
  } finally {
    await secured.stop();
    await open.stop();
  }
}

benchmark(module, main);
