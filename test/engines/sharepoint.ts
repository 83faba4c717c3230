/**
 * The `sharepoint` engine: the SharePoint REST simulator (simulators/sharepoint/main.ts) on the common
 * HTTPS server with its identity provider, started like the other engines (own process group, stops
 * when our stdin pipe closes). `connectorParams` is exactly the `params` object of a `sharepoint`
 * connector that reaches it.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { EngineInfoBase } from './engines';
import { HOST, launchProcess, waitUntilReady, withPortRetry, type Run, type Started } from './engines';

export interface SharePointInfo extends EngineInfoBase {
  name: 'sharepoint';
  /** https://127.0.0.1:P (also the identity provider's authorityHost and the token audience) */
  url: string;
  /** The site collection the simulator holds: https://127.0.0.1:P/sites/gateway (subsite /team). */
  siteUrl: string;
  tenantId: string;
  clientId: string;
  /** Refused by SharePoint app-only, as by SharePoint Online; kept for tests of that refusal. */
  clientSecret: string;
  certificatePath: string;
  certificateThumbprint: string;
  caFile: string;
  /** The params of a `sharepoint` connector pointed at this simulator. */
  connectorParams: {
    tenantId: string;
    clientId: string;
    certificatePath: string;
    certificateThumbprint: string;
    authorityHost: string;
    siteUrl: string;
    library: string;
    caFile: string;
  };
}

const MAIN = path.join(__dirname, 'simulators', 'sharepoint', 'main.ts');

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

export async function startSharePoint(dir: string, run: Run): Promise<Started<'sharepoint'>> {
  // Both simulators share one test CA (one caFile for a gateway reaching both).
  const tlsDir = path.join(path.dirname(dir), 'ms-tls');
  return withPortRetry('sharepoint', async (port) => {
    const state = path.join(dir, 'state');
    const proc = launchProcess('sharepoint', dir, run, {
      command: process.execPath,
      args: ['-r', require.resolve('ts-node/register/transpile-only'), MAIN, '--port', String(port), '--dir', state, '--tls-dir', tlsDir],
      cwd: path.resolve(__dirname, '..', '..'),
      env: { ...process.env, TS_NODE_PROJECT: path.resolve(__dirname, '..', '..', 'tsconfig.json') },
      stopSignal: 'SIGTERM',
      watchdog: false,
    });
    const connectionFile = path.join(state, 'connection.json');
    await waitUntilReady('sharepoint', proc, async () => {
      if (!fs.existsSync(connectionFile)) return false;
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
    const siteUrl = `${c.origin}/sites/gateway`;
    const info: SharePointInfo = {
      name: 'sharepoint',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url: c.origin,
      siteUrl,
      tenantId: c.tenantId,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      certificatePath: c.certificatePath,
      certificateThumbprint: c.certificateThumbprint,
      caFile: c.caFile,
      connectorParams: {
        tenantId: c.tenantId,
        clientId: c.clientId,
        certificatePath: c.certificatePath,
        certificateThumbprint: c.certificateThumbprint,
        authorityHost: c.origin,
        siteUrl,
        library: 'Documents',
        caFile: c.caFile,
      },
    };
    return { info, proc };
  });
}
