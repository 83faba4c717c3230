import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const MAIN_JS = path.join(REPO_ROOT, 'dist/apps/api/src/main.js');

/** The node flags of the shipped start command (package.json's `start`: `node [flags] <script>`). */
export function shippedNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`package.json's start script does not run node: ${start}`);
  return words.slice(1, -1);
}

/** Builds dist/ when it is missing or older than the sources (what `npm start` does). */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-if-needed.js')], { cwd: REPO_ROOT, stdio: 'inherit' });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Runs the built gateway as a user would (the start command's `node [flags] dist/.../main.js`), waiting until /api/health answers. */
export async function spawnGateway(env: Record<string, string>, options: { waitReady?: boolean; readyTimeoutMs?: number } = {}): Promise<GatewayProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  let out = '';
  let err = '';
  const child = spawn(process.execPath, [...shippedNodeFlags(), MAIN_JS], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const context = env.GATEWAY_CONTEXT_PATH ?? '';
  const baseUrl = `http://127.0.0.1:${port}${context}`;
  const handle: GatewayProcess = {
    child,
    port,
    baseUrl,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (options.waitReady === false) return handle;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}: ${err || out}`);
    try {
      const res = await fetch(`${baseUrl}/api/health`);
      if (res.ok) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not become ready: ${err || out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
