/**
 * MinIO, built from the Go module proxy (`go install github.com/minio/minio@<pinned>`, about five
 * minutes on two cores; cached afterwards), one drive in a temporary folder. Its single-drive mode
 * keeps object versions, so the versioning tests run here. AGPL: a test engine only, never shipped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HOST,
  cacheRoot,
  freePort,
  httpRequest,
  launchProcess,
  requireGo,
  runToLog,
  seconds,
  tailOfFile,
  waitUntilReady,
  withPortRetry,
  type EngineInfoBase,
  type Run,
  type Started,
} from './engines';
import type { S3EngineFields } from './s3proxy';

/** Pinned: `@latest` on 2026-11-23 (the module has no semver tags, only pseudo-versions). */
export const MINIO_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';

export interface MinioInfo extends EngineInfoBase, S3EngineFields {
  name: 'minio';
}

let building: Promise<string> | undefined;

export function buildMinio(log: (line: string) => void): Promise<string> {
  const outDir = path.join(cacheRoot(), `minio-${MINIO_VERSION}`);
  const binary = path.join(outDir, 'minio');
  if (fs.existsSync(binary)) return Promise.resolve(binary);
  building ??= (async () => {
    const go = requireGo();
    const root = cacheRoot();
    fs.mkdirSync(root, { recursive: true });
    const work = fs.mkdtempSync(path.join(root, '.build-minio-'));
    const logFile = path.join(root, 'minio-build.log');
    fs.writeFileSync(logFile, '');
    try {
      const started = Date.now();
      log('minio: building with Go (about five minutes the first time)');
      const code = await runToLog(go, ['install', '-trimpath', `github.com/minio/minio@${MINIO_VERSION}`], {
        cwd: work,
        env: { ...process.env, CGO_ENABLED: '0', GOBIN: path.join(work, 'out') },
        logFile,
      });
      if (code !== 0 || !fs.existsSync(path.join(work, 'out', 'minio'))) {
        throw new Error(`Go build of MinIO failed (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
      }
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.renameSync(path.join(work, 'out'), outDir);
      log(`minio: built in ${seconds(Date.now() - started)}`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
      building = undefined;
    }
    return binary;
  })();
  return building;
}

export async function startMinio(binary: string, dir: string, run: Run): Promise<Started<'minio'>> {
  const accessKeyId = 'gateway-test';
  const secretAccessKey = 'gateway-test-secret';
  return withPortRetry('minio', async (port) => {
    const consolePort = await freePort();
    const endpoint = `http://${HOST}:${port}`;
    const proc = launchProcess('minio', dir, run, {
      command: binary,
      args: ['server', path.join(dir, 'data'), '--address', `${HOST}:${port}`, '--console-address', `${HOST}:${consolePort}`, '--quiet'],
      cwd: dir,
      env: { ...process.env, MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
      stopSignal: 'SIGTERM',
      watchdog: true,
    });
    await waitUntilReady('minio', proc, async () => (await httpRequest(`${endpoint}/minio/health/live`)).status === 200);
    const info: MinioInfo = {
      name: 'minio',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      endpoint,
      region: 'us-east-1',
      accessKeyId,
      secretAccessKey,
      versioning: true,
    };
    return { info, proc };
  });
}
