import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADMIN, basic } from '../support/gateway';
import { freePort, REPO_ROOT } from '../support/process';
import { parseCopy, parseDockerfile, parseEnv, type Stage } from './dockerfile';

const DOCKERFILE = path.join(REPO_ROOT, 'docker/Dockerfile');
/**
 * The production install (`npm ci --omit=dev`) compiles better-sqlite3 and argon2 from source here
 * (no prebuilt binaries can be fetched): minutes. Its result is kept, keyed by the lockfile, Node's
 * version and the platform, and reused while none of them changes; any change installs again.
 */
const DEPS_CACHE = path.join(os.homedir(), '.cache', 'content-gateway-docker');

const log = (line: string) => process.stderr.write(`[dockerfile] ${line}\n`);

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (exit ${result.status}):\n${(result.stderr || result.stdout).slice(-4000)}`);
}

/**
 * Runs docker/Dockerfile's stages without Docker: each stage is a clean folder standing for
 * its WORKDIR /app, COPY copies from the repository (the build context) or from an earlier
 * stage's folder, and each RUN is executed as below (an unknown RUN fails the test, so the
 * Dockerfile cannot drift from what is checked here):
 *   apt-get install <pkgs>   the packages must be installed here (dpkg), nothing is installed
 *   npm ci --omit=dev        run for real in the clean folder (reused from DEPS_CACHE, see there)
 *   npm ci                   the dev install: reused from this checkout's node_modules, installed
 *                            from the same package-lock.json (the one step not repeated, for CI time)
 *   npx nest build api       run for real in the clean folder, from the copied sources
 *   mkdir -p /data && chown  the data folder is a temporary one of this test (no chown needed)
 * The final stage is then started with its ENV and CMD, and its HEALTHCHECK command must pass.
 */
describe('docker/Dockerfile, its steps run in clean folders, and the result started', () => {
  let work: string;
  const stageDirs = new Map<string, string>();
  let final: { dir: string; env: Record<string, string>; cmd: string[]; healthcheck?: string; user?: string; expose: string[] };

  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-dockerfile-'));
    const stages = parseDockerfile(fs.readFileSync(DOCKERFILE, 'utf8'));
    stages.forEach((stage, i) => {
      const dir = path.join(work, stage.name ?? `stage-${i}`);
      const result = buildStage(stage, dir);
      if (stage.name) stageDirs.set(stage.name, dir);
      if (i === stages.length - 1) final = { dir, ...result };
    });
  }, 900_000);
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  function buildStage(stage: Stage, dir: string) {
    const parent = stageDirs.get(stage.from);
    if (parent) fs.cpSync(parent, dir, { recursive: true, verbatimSymlinks: true });
    else {
      // A base image: the same Node major as here.
      const major = stage.from.match(/^node:(\d+)/)?.[1];
      expect([stage.from, major]).toEqual([stage.from, process.versions.node.split('.')[0]]);
      fs.mkdirSync(dir, { recursive: true });
    }
    const env: Record<string, string> = {};
    let cmd: string[] = [];
    let healthcheck: string | undefined;
    let user: string | undefined;
    const expose: string[] = [];
    for (const step of stage.steps) {
      const where = `Dockerfile line ${step.line}`;
      switch (step.keyword) {
        case 'WORKDIR':
          expect([where, step.args]).toEqual([where, '/app']);
          break;
        case 'ENV':
          Object.assign(env, parseEnv(step.args));
          break;
        case 'COPY': {
          const copy = parseCopy(step.args);
          const fromDir = copy.from ? stageDirs.get(copy.from) : REPO_ROOT;
          if (!fromDir) throw new Error(`${where}: unknown stage ${copy.from}`);
          for (const source of copy.sources) {
            const src = copy.from ? path.join(fromDir, path.relative('/app', source)) : path.join(fromDir, source);
            const dest = copy.dest.endsWith('/') ? path.join(dir, copy.dest, path.basename(source)) : path.join(dir, copy.dest);
            if (!fs.existsSync(src)) throw new Error(`${where}: ${source} does not exist`);
            fs.cpSync(src, dest, { recursive: true, verbatimSymlinks: true });
          }
          break;
        }
        case 'RUN':
          runStep(step.args, dir, where);
          break;
        case 'USER':
          user = step.args;
          break;
        case 'EXPOSE':
          expose.push(...step.args.split(/\s+/));
          break;
        case 'VOLUME':
          break;
        case 'HEALTHCHECK':
          healthcheck = step.args.match(/\bCMD\s+(.*)$/)?.[1];
          if (!healthcheck) throw new Error(`${where}: HEALTHCHECK without CMD`);
          break;
        case 'CMD':
          cmd = JSON.parse(step.args) as string[];
          break;
        default:
          throw new Error(`${where}: ${step.keyword} is not understood by this test; teach it or keep to the listed instructions`);
      }
    }
    return { env, cmd, healthcheck, user, expose };
  }

  function runStep(command: string, dir: string, where: string): void {
    const apt = command.match(/^apt-get update && apt-get install -y --no-install-recommends (.+?) && rm -rf \/var\/lib\/apt\/lists\/\*$/);
    if (apt) {
      for (const pkg of apt[1].split(/\s+/)) {
        const status = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout;
        expect([where, pkg, status]).toEqual([where, pkg, 'install ok installed']);
      }
    } else if (command === 'npm ci --omit=dev') {
      productionInstall(dir);
    } else if (command === 'npm ci') {
      expect(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).toBe(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8'));
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    } else if (command === 'npx nest build api') {
      log('npx nest build api (from the copied sources)');
      run('npx', ['nest', 'build', 'api'], dir);
    } else if (command === 'mkdir -p /data && chown node:node /data') {
      // The started process gets a temporary data folder of its own.
    } else {
      throw new Error(`${where}: RUN ${command} is not understood by this test`);
    }
  }

  function productionInstall(dir: string): void {
    const key = createHash('sha256')
      .update(fs.readFileSync(path.join(dir, 'package-lock.json')))
      .update(`${process.version} ${process.platform} ${process.arch}`)
      .digest('hex')
      .slice(0, 16);
    const cached = path.join(DEPS_CACHE, `deps-${key}`);
    if (!fs.existsSync(path.join(cached, '.complete'))) {
      log('npm ci --omit=dev (no cached install for this lockfile: installing, native modules compile)');
      const fresh = `${cached}.tmp-${process.pid}`;
      fs.rmSync(fresh, { recursive: true, force: true });
      fs.mkdirSync(fresh, { recursive: true });
      for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(dir, f), path.join(fresh, f));
      run('npm', ['ci', '--omit=dev', '--prefer-offline'], fresh);
      fs.writeFileSync(path.join(fresh, '.complete'), new Date().toISOString());
      fs.rmSync(cached, { recursive: true, force: true });
      fs.renameSync(fresh, cached);
      for (const old of fs.readdirSync(DEPS_CACHE)) if (old.startsWith('deps-') && old !== `deps-${key}`) fs.rmSync(path.join(DEPS_CACHE, old), { recursive: true, force: true });
    } else {
      log(`npm ci --omit=dev: reusing the install of this very lockfile (${cached})`);
    }
    execFileSync('cp', ['-a', path.join(cached, 'node_modules'), path.join(dir, 'node_modules')]);
  }

  it('ships production dependencies only, and the built gateway', () => {
    const modules = path.join(final.dir, 'node_modules');
    expect(fs.lstatSync(modules).isSymbolicLink()).toBe(false);
    for (const dep of ['@nestjs/core', 'better-sqlite3', '@node-rs/argon2', 'prom-client', 'pg']) expect([dep, fs.existsSync(path.join(modules, dep))]).toEqual([dep, true]);
    for (const devDep of ['typescript', 'jest', '@nestjs/cli', 'playwright-core', '@stryker-mutator/core']) {
      expect([devDep, fs.existsSync(path.join(modules, devDep))]).toEqual([devDep, false]);
    }
    expect(fs.existsSync(path.join(final.dir, final.cmd[final.cmd.length - 1]))).toBe(true);
    expect(final.user).toBe('node');
    expect(final.expose).toEqual([final.env.PORT]);
  });

  it('starts with the image\'s ENV and CMD, passes its HEALTHCHECK, serves the API and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-dockerfile-data-'));
    const env = {
      PATH: process.env.PATH ?? '',
      ...final.env,
      // What `docker run -p` and the volume give the container:
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    };
    expect(final.cmd[0]).toBe('node');
    const child = spawn(process.execPath, final.cmd.slice(1), { cwd: final.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the image's CMD exited with ${child.exitCode}:\n${output}`);
        const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false);
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`not ready after 60 s:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const health = spawnSync('sh', ['-c', final.healthcheck!], { env, encoding: 'utf8', timeout: 5_000 });
      expect([health.status, health.stderr]).toEqual([0, '']);

      const connections = await fetch(`http://127.0.0.1:${port}/api/repo/connections`, { headers: { Authorization: basic(ADMIN.username, ADMIN.password) } });
      expect(connections.status).toBe(200);
      expect(await connections.json()).toMatchObject({ success: true, results: [{ id: 'fs' }] });
      expect(output).not.toMatch(/Cannot find module/);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
