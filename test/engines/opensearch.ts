/**
 * OpenSearch 2.19 (java/opensearch): the server jar and transport-netty4-client from Maven Central,
 * started in-process as a real single node with classpath plugins, security off (the security plugin
 * is not on the classpath), on 127.0.0.1 only. The 2.19 line runs on Java 17; 3.x needs Java 21.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST, httpRequest, javaLaunch, launchProcess, waitUntilReady, withPortRetry, type EngineInfoBase, type Prepared, type Run, type Started } from './engines';

export interface OpenSearchInfo extends EngineInfoBase {
  name: 'opensearch';
  /** http://127.0.0.1:P (no security, no TLS) */
  url: string;
  version: string;
}

export async function startOpenSearch(prepared: Prepared, dir: string, run: Run): Promise<Started<'opensearch'>> {
  if (prepared.kind !== 'java') throw new Error('opensearch: not a Java build');
  return withPortRetry('opensearch', async (port) => {
    const home = path.join(dir, 'home');
    fs.rmSync(home, { recursive: true, force: true });
    const proc = launchProcess('opensearch', dir, run, javaLaunch(prepared, 'opensearch', ['-Xms512m', '-Xmx512m', '-XX:+UseG1GC'], [String(port), home], dir));
    const url = `http://${HOST}:${port}`;
    await waitUntilReady('opensearch', proc, async () => {
      const response = await httpRequest(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`);
      const status = response.status === 200 ? response.json<{ status?: string }>().status : undefined;
      return status === 'yellow' || status === 'green';
    });
    const root = await httpRequest(url);
    const version = root.json<{ version?: { number?: string } }>().version?.number ?? 'unknown';
    const info: OpenSearchInfo = { name: 'opensearch', host: HOST, port, pid: proc.pid, dir, logFile: proc.logFile, url, version };
    return { info, proc };
  });
}
