'use strict';
// Reference servers measured beside the gateway in the same run: Debian's nginx
// and rclone. Installed with apt-get when missing (we are root on these machines).
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { freePort, stopper, waitFor, workDir } = require('./harness');

function which(binary) {
  for (const dir of (process.env.PATH || '').split(':').concat(['/usr/sbin', '/usr/bin'])) {
    const full = path.join(dir, binary);
    if (fs.existsSync(full)) return full;
  }
  return undefined;
}

function ensureDebianPackage(binary, pkg) {
  const found = which(binary);
  if (found) return found;
  if (process.getuid && process.getuid() !== 0) {
    throw new Error(`${binary} not found: install Debian's ${pkg} package (apt-get install ${pkg})`);
  }
  console.log(`[bench] installing Debian's ${pkg}...`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  const installed = which(binary);
  if (!installed) throw new Error(`${binary} still missing after installing ${pkg}`);
  return installed;
}

/** Debian's nginx on 127.0.0.1 with one worker (like the gateway's one process) and `server` as its one server block's body. */
async function startNginxWith(server) {
  const nginx = ensureDebianPackage('nginx', 'nginx-light');
  const port = await freePort();
  const prefix = workDir(`nginx-${port}`);
  fs.mkdirSync(path.join(prefix, 'logs'), { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port};
    ${server}
  }
}
`,
  );
  const child = spawn(nginx, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${baseUrl}/`).catch((e) => {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}); its complaint is printed above`);
    throw e;
  });
  return { baseUrl, stop: stopper(child) };
}

/** nginx serving `root` as static files. */
function startNginx(root) {
  return startNginxWith(`root ${root};\n    autoindex on;`);
}

/**
 * nginx as a streaming reverse proxy of `target` (an http origin): the request's path and query go on
 * unchanged, with the target's own Host header and without Authorization (a presigned URL carries its
 * signature in the query). Unbuffered, so the bytes pass through as they come, like a Node relay's,
 * read from the upstream 1 MiB at a time (the default, 4 KiB, would make the floor a syscall count).
 * The least a hop written in C costs on this machine: the floor for the remote-download benchmarks.
 */
function startNginxProxy(target) {
  const origin = new URL(target);
  return startNginxWith(
    `location / {
      proxy_pass ${origin.origin};
      proxy_http_version 1.1;
      proxy_set_header Host ${origin.host};
      proxy_set_header Authorization "";
      proxy_buffering off;
      proxy_buffer_size 1m;
      proxy_buffers 4 1m;
      proxy_busy_buffers_size 2m;
    }`,
  );
}

/** `rclone serve http` over `root` on 127.0.0.1. */
async function startRclone(root) {
  const rclone = ensureDebianPackage('rclone', 'rclone');
  const port = await freePort();
  const child = spawn(rclone, ['serve', 'http', root, '--addr', `127.0.0.1:${port}`, '--config', '/dev/null'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${baseUrl}/`);
  return { baseUrl, stop: stopper(child) };
}

/**
 * A few lines of Node streaming `file` with 1 MiB reads: no framework, no auth, no lookups.
 * nginx sends with sendfile(2), which Node has no API for, so this is the best any Node
 * process reaches on the machine: the download benchmarks print the gateway against it too.
 */
function startBareNode(file) {
  const script = `
    const http = require('node:http'); const fs = require('node:fs');
    const file = process.argv[1];
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-length': fs.statSync(file).size, 'content-type': 'application/octet-stream' });
      fs.createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(res);
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ url: `http://127.0.0.1:${String(line).trim()}/`, stop: () => child.kill() }));
  });
}

/**
 * A bare Node relay in its own process: each request goes on to `target` (same method, path, query,
 * content type, authorization and body) over a keep-alive agent, and the answer comes back as it is. No
 * framework, no auth of its own, no parsing: the least any HTTP service in front of an engine costs on this machine.
 */
function startBareRelay(target) {
  const script = `
    const http = require('node:http');
    const target = new URL(process.argv[1]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const server = http.createServer((req, res) => {
      const headers = req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {};
      if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] || 'application/json' });
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ url: `http://127.0.0.1:${String(line).trim()}`, stop: () => child.kill() }));
  });
}

module.exports = { ensureDebianPackage, startBareNode, startBareRelay, startNginx, startNginxProxy, startRclone, which };
