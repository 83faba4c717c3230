/**
 * nginx as a test engine: Debian's nginx (nginx-light, installed with apt-get when missing and
 * running as root) running the shipped docker/nginx.conf on 127.0.0.1, with only the lines that
 * file marks "harness:" rewritten: pid, logs, listen address, the upstream servers (the gateway
 * processes a test started) and the offload's internal locations (the test's data folders).
 *
 * Unlike the other engines, nginx needs to know its upstreams and the folders behind its internal
 * locations, which a test creates itself: so a test file calls startNginx() once its gateways
 * listen (as a test file may start its own CMIS server), rather than global-setup starting one
 * nginx for the run. A missing nginx is installed from Debian (nginx-light) when running as root.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { aptInstall } from './engines';

export const NGINX_CONF = path.resolve(__dirname, '../../docker/nginx.conf');
const HOST = '127.0.0.1';

export interface NginxOptions {
  /** The gateway processes nginx balances over (round-robin, as in compose.yaml). */
  upstreams: Array<{ host?: string; port: number }>;
  /** The user-file folder mapped to /_offload/files/ (GATEWAY_ACCEL_REDIRECT=/_offload). */
  userFilesDir?: string;
  /** Filesystem connector roots by connector id, mapped to /_offload/repo/<id>/. */
  connectorRoots?: Record<string, string>;
  /** The offload block's text as written (scripts/nginx-offload.js's output) instead of the shipped locations. */
  offloadBlock?: string;
  /** Parent of nginx's folder (config, logs, temp files); default os.tmpdir(). */
  tmpDir?: string;
}

export interface NginxHandle {
  host: string;
  port: number;
  /** http://127.0.0.1:P */
  url: string;
  /** The master process (its workers are its children). */
  pid: number;
  dir: string;
  configFile: string;
  errorLog: string;
  accessLog: string;
  /** Resident set size of the master and its workers, in bytes. */
  rss(): number;
  stop(): Promise<void>;
}

export function findNginx(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(candidate)) return candidate;
  return undefined;
}

/** The binary, installing Debian's nginx-light when it is missing (as root; otherwise a clear error). */
export async function requireNginx(log: (line: string) => void = (line) => process.stderr.write(`[engines] ${line}\n`)): Promise<string> {
  const found = findNginx();
  if (found) return found;
  await aptInstall(['nginx-light'], log);
  const installed = findNginx();
  if (!installed) throw new Error("nginx not found even after installing Debian's 'nginx-light'");
  return installed;
}

/** docker/nginx.conf with the lines marked "harness:" rewritten for a run in `dir`. */
export function renderNginxConf(template: string, options: NginxOptions & { port: number; dir: string }): string {
  const lines = template.split('\n');
  const out: string[] = [];
  let upstreamWritten = false;
  let inOffload = false;
  for (const line of lines) {
    const indent = line.match(/^\s*/)![0];
    if (line.includes('# offload:begin')) {
      inOffload = true;
      out.push(line, ...(options.offloadBlock !== undefined ? [options.offloadBlock] : offloadLocations(template, options, indent)));
      continue;
    }
    if (line.includes('# offload:end')) inOffload = false;
    if (inOffload) continue;
    if (!line.includes('# harness:')) {
      out.push(line);
      if (/^http \{/.test(line)) {
        // Debian's compiled-in temp paths are under /var/lib/nginx; keep the run self-contained.
        out.push(`  client_body_temp_path ${path.join(options.dir, 'client_body')};`, `  proxy_temp_path ${path.join(options.dir, 'proxy')};`);
      }
      continue;
    }
    const what = line.slice(line.indexOf('# harness:') + '# harness:'.length).trim();
    switch (what) {
      case 'pid':
        out.push(`pid ${path.join(options.dir, 'nginx.pid')};`);
        // The test's data folders belong to the user running the tests (mode 0700 temp folders).
        if (typeof process.getuid === 'function' && process.getuid() === 0) out.push('user root;');
        break;
      case 'error_log':
        out.push(`error_log ${path.join(options.dir, 'error.log')} warn;`);
        break;
      case 'access_log':
        out.push(`${indent}access_log ${path.join(options.dir, 'access.log')};`);
        break;
      case 'upstream':
        if (!upstreamWritten) for (const u of options.upstreams) out.push(`${indent}server ${u.host ?? HOST}:${u.port};`);
        upstreamWritten = true;
        break;
      case 'listen':
        out.push(`${indent}listen ${HOST}:${options.port};`);
        break;
      default:
        throw new Error(`docker/nginx.conf: unknown harness marker '${what}'`);
    }
  }
  return out.join('\n');
}

/** The shipped internal locations, one per area of this run (the connector location repeated per connector). */
function offloadLocations(template: string, options: NginxOptions, indent: string): string[] {
  const block = template.slice(template.indexOf('# offload:begin'), template.indexOf('# offload:end'));
  const locations = [...block.matchAll(/^\s*location (\S+) \{[^}]*\}/gm)].map((m) => m[0].trim());
  const files = locations.find((l) => l.includes('# harness: user files'));
  const repo = locations.find((l) => l.includes('# harness: one per connector'));
  if (!files || !repo) throw new Error('docker/nginx.conf: the offload block lost its user-file or connector location');
  const out: string[] = [];
  const alias = (location: string, dir: string) => location.replace(/alias [^;]+;[^\n]*/, `alias ${dir.replace(/\/?$/, '/')};`);
  if (options.userFilesDir) out.push(alias(files, options.userFilesDir));
  for (const [id, root] of Object.entries(options.connectorRoots ?? {})) {
    out.push(alias(repo, root).replace(/location \/_offload\/repo\/[^/]+\/ \{[^\n]*/, `location /_offload/repo/${id}/ {`));
  }
  return out.map((l) =>
    l
      .split('\n')
      .map((x, i, all) => indent + (i === 0 || i === all.length - 1 ? '' : '  ') + x.trim())
      .join('\n'),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function rssOfTree(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      total += Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
      for (const child of fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) visit(Number(child));
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return total;
}

/** Starts nginx on a free port of 127.0.0.1 with the shipped configuration; resolves once it answers. */
export async function startNginx(options: NginxOptions): Promise<NginxHandle> {
  const binary = await requireNginx();
  const dir = fs.mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), 'gateway-nginx-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const configFile = path.join(dir, 'nginx.conf');
    fs.writeFileSync(configFile, renderNginxConf(fs.readFileSync(NGINX_CONF, 'utf8'), { ...options, port, dir }));
    const child = spawn(binary, ['-p', dir, '-c', configFile, '-g', 'daemon off;'], { stdio: 'ignore', detached: true });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const handle: NginxHandle = {
      host: HOST,
      port,
      url: `http://${HOST}:${port}`,
      pid: child.pid!,
      dir,
      configFile,
      errorLog: path.join(dir, 'error.log'),
      accessLog: path.join(dir, 'access.log'),
      rss: () => rssOfTree(child.pid!),
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          try {
            process.kill(-child.pid!, 'SIGTERM');
          } catch {
            // already gone
          }
          await exited;
        }
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
    const deadline = Date.now() + 15_000;
    while (child.exitCode === null && Date.now() < deadline) {
      if (await answers(port)) return handle;
      await new Promise((r) => setTimeout(r, 50));
    }
    const log = fs.existsSync(handle.errorLog) ? fs.readFileSync(handle.errorLog, 'utf8') : '';
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    await exited;
    // Another process took the port between freePort() and nginx's bind: try another.
    if (attempt < 3 && /Address already in use/.test(log)) continue;
    throw new Error(`nginx did not start:\n${log.slice(-4000)}`);
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, HOST);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
