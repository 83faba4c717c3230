/**
 * The `graph` engine: the Microsoft Graph (drives) simulator (simulators/graph/main.ts) on the common
 * HTTPS server with its identity provider, started like the other engines (own process group, stops
 * when our stdin pipe closes). `connectorParams` is exactly the `params` object of a `graph` connector
 * that reaches it (copy it into a gateway configuration to point a gateway at the simulator).
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { EngineInfoBase } from './engines';
import { HOST, launchProcess, waitUntilReady, withPortRetry, type Run, type Started } from './engines';

export interface GraphInfo extends EngineInfoBase {
  name: 'graph';
  /** https://127.0.0.1:P (also the identity provider's authorityHost and the token audience) */
  url: string;
  /** https://127.0.0.1:P/v1.0 */
  graphUrl: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  certificatePath: string;
  certificateThumbprint: string;
  caFile: string;
  /** The root site and its "Documents" drive. */
  siteId: string;
  driveId: string;
  /** The params of a `graph` connector pointed at this simulator. */
  connectorParams: {
    tenantId: string;
    clientId: string;
    clientSecret: string;
    authorityHost: string;
    graphUrl: string;
    siteId: string;
    driveId: string;
    caFile: string;
  };
}

const MAIN = path.join(__dirname, 'simulators', 'graph', 'main.ts');

function healthy(origin: string, caFile: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(`${origin}/_simulator/health`, { ca: fs.readFileSync(caFile), timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

export async function startGraph(dir: string, run: Run): Promise<Started<'graph'>> {
  // Both simulators share one test CA (one caFile for a gateway reaching both).
  const tlsDir = path.join(path.dirname(dir), 'ms-tls');
  return withPortRetry('graph', async (port) => {
    const state = path.join(dir, 'state');
    const proc = launchProcess('graph', dir, run, {
      command: process.execPath,
      args: ['-r', require.resolve('ts-node/register/transpile-only'), MAIN, '--port', String(port), '--dir', state, '--tls-dir', tlsDir],
      cwd: path.resolve(__dirname, '..', '..'),
      env: { ...process.env, TS_NODE_PROJECT: path.resolve(__dirname, '..', '..', 'tsconfig.json') },
      stopSignal: 'SIGTERM',
      watchdog: false,
    });
    const connectionFile = path.join(state, 'connection.json');
    const infoFile = path.join(state, 'graph-info.json');
    await waitUntilReady('graph', proc, async () => {
      if (!fs.existsSync(connectionFile) || !fs.existsSync(infoFile)) return false;
      const c = JSON.parse(fs.readFileSync(connectionFile, 'utf8')) as { origin: string; caFile: string; port: number };
      return c.port === port && (await healthy(c.origin, c.caFile));
    });
    const c = JSON.parse(fs.readFileSync(connectionFile, 'utf8')) as {
      origin: string;
      tenantId: string;
      clientId: string;
      clientSecret: string;
      certificatePath: string;
      certificateThumbprint: string;
      caFile: string;
    };
    const g = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { graphUrl: string; siteId: string; driveId: string };
    const info: GraphInfo = {
      name: 'graph',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url: c.origin,
      graphUrl: g.graphUrl,
      tenantId: c.tenantId,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      certificatePath: c.certificatePath,
      certificateThumbprint: c.certificateThumbprint,
      caFile: c.caFile,
      siteId: g.siteId,
      driveId: g.driveId,
      connectorParams: {
        tenantId: c.tenantId,
        clientId: c.clientId,
        clientSecret: c.clientSecret,
        authorityHost: c.origin,
        graphUrl: g.graphUrl,
        siteId: g.siteId,
        driveId: g.driveId,
        caFile: c.caFile,
      },
    };
    return { info, proc };
  });
}
