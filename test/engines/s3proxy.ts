/**
 * S3Proxy (org.gaul:s3proxy, the jar-with-dependencies from Maven Central) on its filesystem
 * backend, AWS v2/v4 signatures checked. The jar is fetched by Maven (dependency:copy into the build
 * cache, so ~/.m2 and proxies behave as for the other Java engines) and started with one
 * properties file. It has no bucket versioning: what needs versioning runs on MinIO (minio.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { httpRequest, mavenJar, type Run, type Started } from './engines';
import { startS3Engine, type S3EngineInfo } from './s3';

export const S3PROXY_VERSION = '2.7.0';
const ARTIFACT = `org.gaul:s3proxy:${S3PROXY_VERSION}:jar:jar-with-dependencies`;
const JAR = `s3proxy-${S3PROXY_VERSION}-jar-with-dependencies.jar`;

export type S3ProxyInfo = S3EngineInfo<'s3proxy'>;

/** The jar, from the cache or fetched from Maven Central once. */
export function buildS3Proxy(log: (line: string) => void): Promise<string> {
  return mavenJar('s3proxy', ARTIFACT, JAR, `s3proxy-${S3PROXY_VERSION}`, log);
}

export function startS3Proxy(jar: string, java: string, dir: string, run: Run): Promise<Started<'s3proxy'>> {
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { recursive: true });
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return startS3Engine('s3proxy', dir, run, {
    launch: (_port, endpoint, { accessKeyId, secretAccessKey }) => {
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
      return {
        command: java,
        args: ['-Xms64m', '-Xmx512m', '-XX:+ExitOnOutOfMemoryError', `-Djava.io.tmpdir=${tmp}`, '-jar', jar, '--properties', properties],
        cwd: dir,
        stopSignal: 'SIGTERM',
        // S3Proxy's own main does not watch stdin.
        watchdog: true,
      };
    },
    // Any answer (403 without a signature) means Jetty is serving.
    ready: async (endpoint) => (await httpRequest(`${endpoint}/`)).status > 0,
    versioning: false,
  });
}
