/**
 * S3Proxy (org.gaul:s3proxy, the jar-with-dependencies from Maven Central) on its filesystem
 * backend, AWS v2/v4 signatures checked. The jar is fetched by Maven (dependency:copy into the build
 * cache, so ~/.m2 and proxies behave as for the other Java engines) and started with one
 * properties file. It has no bucket versioning: what needs versioning runs on MinIO (minio.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HOST,
  cacheRoot,
  httpRequest,
  launchProcess,
  requireJava,
  requireMaven,
  runToLog,
  seconds,
  tailOfFile,
  waitUntilReady,
  withPortRetry,
  type EngineInfoBase,
  type Run,
  type Started,
} from './engines';

export const S3PROXY_VERSION = '2.7.0';
const ARTIFACT = `org.gaul:s3proxy:${S3PROXY_VERSION}:jar:jar-with-dependencies`;
const JAR = `s3proxy-${S3PROXY_VERSION}-jar-with-dependencies.jar`;

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

export interface S3ProxyInfo extends EngineInfoBase, S3EngineFields {
  name: 's3proxy';
}

let building: Promise<string> | undefined;

/** The jar, from the cache or fetched from Maven Central once. */
export function buildS3Proxy(log: (line: string) => void): Promise<string> {
  const outDir = path.join(cacheRoot(), `s3proxy-${S3PROXY_VERSION}`);
  const jar = path.join(outDir, JAR);
  if (fs.existsSync(jar)) return Promise.resolve(jar);
  building ??= (async () => {
    requireJava();
    const mvn = requireMaven();
    const root = cacheRoot();
    fs.mkdirSync(root, { recursive: true });
    const work = fs.mkdtempSync(path.join(root, '.build-s3proxy-'));
    const logFile = path.join(root, 's3proxy-build.log');
    fs.writeFileSync(logFile, '');
    try {
      const started = Date.now();
      log(`s3proxy: fetching ${ARTIFACT} with Maven`);
      const code = await runToLog(mvn, ['-B', '-ntp', 'dependency:copy', `-Dartifact=${ARTIFACT}`, `-DoutputDirectory=${work}`], { cwd: work, logFile });
      if (code !== 0 || !fs.existsSync(path.join(work, JAR))) {
        throw new Error(`Maven could not fetch ${ARTIFACT} (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
      }
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.renameSync(work, outDir);
      log(`s3proxy: fetched in ${seconds(Date.now() - started)}`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
      building = undefined;
    }
    return jar;
  })();
  return building;
}

export async function startS3Proxy(jar: string, java: string, dir: string, run: Run): Promise<Started<'s3proxy'>> {
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { recursive: true });
  const accessKeyId = 'gateway-test';
  const secretAccessKey = 'gateway-test-secret';
  return withPortRetry('s3proxy', async (port) => {
    const endpoint = `http://${HOST}:${port}`;
    const properties = path.join(dir, 's3proxy.properties');
    fs.writeFileSync(
      properties,
      [
        `s3proxy.endpoint=${endpoint}`,
        's3proxy.authorization=aws-v2-or-v4',
        `s3proxy.identity=${accessKeyId}`,
        `s3proxy.credential=${secretAccessKey}`,
        'jclouds.provider=filesystem',
        `jclouds.filesystem.basedir=${data}`,
        '',
      ].join('\n'),
    );
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp, { recursive: true });
    const proc = launchProcess('s3proxy', dir, run, {
      command: java,
      args: ['-Xms64m', '-Xmx512m', '-XX:+ExitOnOutOfMemoryError', `-Djava.io.tmpdir=${tmp}`, '-jar', jar, '--properties', properties],
      cwd: dir,
      stopSignal: 'SIGTERM',
      // S3Proxy's own main does not watch stdin.
      watchdog: true,
    });
    // Any answer (403 without a signature) means Jetty is serving.
    await waitUntilReady('s3proxy', proc, async () => (await httpRequest(`${endpoint}/`)).status > 0);
    const info: S3ProxyInfo = {
      name: 's3proxy',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      endpoint,
      region: 'us-east-1',
      accessKeyId,
      secretAccessKey,
      versioning: false,
    };
    return { info, proc };
  });
}
