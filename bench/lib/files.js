'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const http = require('node:http');

/** Writes a file of `bytes` from a repeated 1 MiB random block (fast, not compressible by accident). */
function makeFile(file, bytes) {
  if (fs.existsSync(file) && fs.statSync(file).size === bytes) return;
  const block = crypto.randomBytes(1024 * 1024);
  const fd = fs.openSync(file + '.tmp', 'w');
  try {
    for (let written = 0; written < bytes; ) {
      const n = Math.min(block.length, bytes - written);
      fs.writeSync(fd, block, 0, n);
      written += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(file + '.tmp', file);
}

/** GETs a URL, discarding the body; resolves with { seconds, bytes, status }. */
function timedGet(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.get(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes, status: res.statusCode }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** curl's arguments to GET a URL, discarding the body, printing `seconds bytes status`. */
function curlArgs(url, headers) {
  return ['-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{http_code}', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
}

function curlAnswer(stdout) {
  const [seconds, bytes, status] = stdout.trim().split(' ');
  return { seconds: Number(seconds), bytes: Number(bytes), status: Number(status) };
}

/** Times a download with curl (a neutral, efficient client), discarding the body. */
function curlGet(url, headers = {}) {
  return curlAnswer(require('node:child_process').execFileSync('curl', curlArgs(url, headers), { encoding: 'utf8' }));
}

/** Starts a curl download in the background; resolves with the same fields. */
function curlGetAsync(url, headers = {}) {
  const { execFile } = require('node:child_process');
  return new Promise((resolve, reject) => execFile('curl', curlArgs(url, headers), { encoding: 'utf8' }, (err, stdout) => (err ? reject(err) : resolve(curlAnswer(stdout)))));
}

/** The sha256 of a stream's bytes, in hex. */
async function sha256Of(stream) {
  const hash = crypto.createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}

/** Fails unless every path ({ name: { url, headers } }) answers the file's very bytes, not just as many of them. */
async function checkSameBytes(file, paths) {
  const expected = await sha256Of(fs.createReadStream(file));
  for (const [name, { url, headers = {} }] of Object.entries(paths)) {
    const got = await new Promise((resolve, reject) => http.get(url, { headers }, (res) => sha256Of(res).then(resolve, reject)).on('error', reject));
    if (got !== expected) throw new Error(`${name} delivered other bytes than the document's (sha256 ${got} vs ${expected})`);
  }
}

/**
 * Reads every path ({ name: { url, headers } }) once to warm it (JIT, page cache), then `rounds` rounds
 * alternating between them in that order, each answer 200 with `bytes`; curl's seconds by name.
 */
function timeDownloads(paths, rounds, bytes) {
  for (const { url, headers } of Object.values(paths)) curlGet(url, headers);
  const seconds = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, { url, headers }] of Object.entries(paths)) {
      const answer = curlGet(url, headers);
      if (answer.status !== 200 || answer.bytes !== bytes) throw new Error(`${name} answered ${answer.status} with ${answer.bytes} bytes`);
      seconds[name].push(answer.seconds);
    }
  }
  return seconds;
}

/** Every round, in the order run, as a `name=s,s,s` line (the machine is shared: a median hides how noisy it was). */
function roundsLine(seconds) {
  return Object.entries(seconds)
    .map(([name, values]) => `${name}=${values.map((x) => x.toFixed(3)).join(',')}`)
    .join(' ');
}

/**
 * A bare relay in a child process (curl runs synchronously in the benches, so their own process cannot
 * serve): `script` is run by `node -e` with `args`, and prints the port it listens on.
 */
function startNodeRelay(script, args, options = {}) {
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, ['-e', script, ...args], { ...options, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ url: `http://127.0.0.1:${String(line).trim()}/`, stop: () => child.kill() }));
  });
}

module.exports = { makeFile, timedGet, curlGet, curlGetAsync, sha256Of, checkSameBytes, timeDownloads, roundsLine, startNodeRelay };
