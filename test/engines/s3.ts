/**
 * What the two S3 servers of the harness (S3Proxy, s3proxy.ts; MinIO, minio.ts) share: the test
 * credentials, the start on a free port with its readiness check, and the info they report.
 */
import { HOST, launchProcess, waitUntilReady, withPortRetry, type EngineInfoBase, type Launch, type Run, type Started } from './engines';

/** What the S3 engines report (S3Proxy and MinIO alike). */
export interface S3EngineFields {
  /** http://127.0.0.1:P (path-style addressing: forcePathStyle) */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Whether buckets can have versioning turned on. */
  versioning: boolean;
}

export type S3EngineKind = 's3proxy' | 'minio';

export type S3EngineInfo<N extends S3EngineKind = S3EngineKind> = EngineInfoBase & S3EngineFields & { name: N };

const ACCESS_KEY_ID = 'gateway-test';
const SECRET_ACCESS_KEY = 'gateway-test-secret';
const REGION = 'us-east-1';

export interface S3Launch {
  /** The process to run on `port` (its endpoint `endpoint`) with these credentials. */
  launch(port: number, endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }): Promise<Launch> | Launch;
  /** Whether the server answers yet. */
  ready(endpoint: string): Promise<boolean>;
  versioning: boolean;
}

/** Starts one S3 server on a free port of 127.0.0.1 (another port when that one was taken meanwhile). */
export function startS3Engine<N extends S3EngineKind>(name: N, dir: string, run: Run, spec: S3Launch): Promise<Started<N>> {
  return withPortRetry(name, async (port) => {
    const endpoint = `http://${HOST}:${port}`;
    const proc = launchProcess(name, dir, run, await spec.launch(port, endpoint, { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY }));
    await waitUntilReady(name, proc, () => spec.ready(endpoint));
    const info: S3EngineInfo<N> = {
      name,
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      endpoint,
      region: REGION,
      accessKeyId: ACCESS_KEY_ID,
      secretAccessKey: SECRET_ACCESS_KEY,
      versioning: spec.versioning,
    };
    return { info, proc } as unknown as Started<N>;
  });
}
