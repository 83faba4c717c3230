/**
 * Apache Tika Server (org.apache.tika:tika-server-standard, the runnable jar from Maven Central),
 * as production runs it: `java -jar … --host 127.0.0.1 --port N`, in its default forked mode (a
 * watchdog JVM restarting the parsing JVM when a document kills it). The jar is fetched by Maven
 * (dependency:copy into the build cache, like S3Proxy's) and the forked JVM's heap is capped by a
 * tika-config.xml, so that two cores shared by many engines keep up.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HOST,
  httpRequest,
  launchProcess,
  mavenJar,
  waitUntilReady,
  withPortRetry,
  type EngineInfoBase,
  type Run,
  type Started,
} from './engines';

export const TIKA_VERSION = '3.3.2';
const ARTIFACT = `org.apache.tika:tika-server-standard:${TIKA_VERSION}:jar`;
const JAR = `tika-server-standard-${TIKA_VERSION}.jar`;

export interface TikaInfo extends EngineInfoBase {
  name: 'tika';
  /** http://127.0.0.1:P (TIKA_URL; the gateway PUTs to /tika) */
  url: string;
  version: string;
}

/** The jar, from the cache or fetched from Maven Central once. */
export function buildTika(log: (line: string) => void): Promise<string> {
  return mavenJar('tika', ARTIFACT, JAR, `tika-${TIKA_VERSION}`, log);
}

export async function startTika(jar: string, java: string, dir: string, run: Run): Promise<Started<'tika'>> {
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const config = path.join(dir, 'tika-config.xml');
  fs.writeFileSync(
    config,
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<properties>',
      '  <server>',
      '    <params>',
      '      <forkedJvmArgs>',
      '        <arg>-Xms64m</arg>',
      '        <arg>-Xmx512m</arg>',
      '        <arg>-XX:+ExitOnOutOfMemoryError</arg>',
      `        <arg>-Djava.io.tmpdir=${tmp}</arg>`,
      '      </forkedJvmArgs>',
      '    </params>',
      '  </server>',
      '</properties>',
      '',
    ].join('\n'),
  );
  return withPortRetry('tika', async (port) => {
    const url = `http://${HOST}:${port}`;
    const proc = launchProcess('tika', dir, run, {
      command: java,
      args: ['-Xms32m', '-Xmx128m', `-Djava.io.tmpdir=${tmp}`, '-jar', jar, '--host', HOST, '--port', String(port), '--config', config],
      cwd: dir,
      stopSignal: 'SIGTERM',
      // Tika's main does not watch stdin; its forked JVM is in the same process group and goes with it.
      watchdog: true,
    });
    let version = '';
    await waitUntilReady('tika', proc, async () => {
      const answer = await httpRequest(`${url}/version`, { timeoutMs: 5_000 });
      if (answer.status !== 200) return false;
      version = answer.text().trim();
      return true;
    });
    const info: TikaInfo = { name: 'tika', host: HOST, port, pid: proc.pid, dir, logFile: proc.logFile, url, version };
    return { info, proc };
  });
}
