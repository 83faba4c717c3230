/**
 * MinIO, built from the Go module proxy (`go install github.com/minio/minio@<pinned>`, about five
 * minutes on two cores; cached afterwards), one drive in a temporary folder. Its single-drive mode
 * keeps object versions, so the versioning tests run here. AGPL: a test engine only, never shipped.
 */
import * as path from 'node:path';
import { HOST, freePort, goInstall, httpRequest, type Run, type Started } from './engines';
import { startS3Engine, type S3EngineInfo } from './s3';

/** Pinned: `@latest` on 2026-11-23 (the module has no semver tags, only pseudo-versions). */
export const MINIO_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';

export type MinioInfo = S3EngineInfo<'minio'>;

export function buildMinio(log: (line: string) => void): Promise<string> {
  return goInstall('minio', `github.com/minio/minio@${MINIO_VERSION}`, 'minio', 'minio', `minio-${MINIO_VERSION}`, log, ' (about five minutes the first time)');
}

export function startMinio(binary: string, dir: string, run: Run): Promise<Started<'minio'>> {
  return startS3Engine('minio', dir, run, {
    launch: async (port, _endpoint, { accessKeyId, secretAccessKey }) => ({
      command: binary,
      args: ['server', path.join(dir, 'data'), '--address', `${HOST}:${port}`, '--console-address', `${HOST}:${await freePort()}`, '--quiet'],
      cwd: dir,
      env: { ...process.env, MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
      stopSignal: 'SIGTERM',
      watchdog: true,
    }),
    ready: async (endpoint) => (await httpRequest(`${endpoint}/minio/health/live`)).status === 200,
    versioning: true,
  });
}
