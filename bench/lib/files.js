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

module.exports = { makeFile, timedGet };

/** Times a download with curl (a neutral, efficient client), discarding the body. */
function curlGet(url, headers = {}) {
  const { execFileSync } = require('node:child_process');
  const args = ['-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{http_code}'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const [seconds, bytes, status] = execFileSync('curl', args, { encoding: 'utf8' }).trim().split(' ');
  return { seconds: Number(seconds), bytes: Number(bytes), status: Number(status) };
}

/** Starts a curl download in the background; resolves with the same fields. */
function curlGetAsync(url, headers = {}) {
  const { execFile } = require('node:child_process');
  const args = ['-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{http_code}'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  return new Promise((resolve, reject) =>
    execFile('curl', args, { encoding: 'utf8' }, (err, stdout) => {
      if (err) return reject(err);
      const [seconds, bytes, status] = stdout.trim().split(' ');
      resolve({ seconds: Number(seconds), bytes: Number(bytes), status: Number(status) });
    }),
  );
}

module.exports.curlGet = curlGet;
module.exports.curlGetAsync = curlGetAsync;
