/**
 * Starts one of the Microsoft simulators (simulators/<kind>/main.ts: `graph` or `sharepoint`) on the
 * common HTTPS server with its identity provider, like the other engines (own process group, stops
 * when our stdin pipe closes), and reads back what it wrote once ready. graph.ts and sharepoint.ts
 * only turn that into their engine info and connector params.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { HOST, launchProcess, waitUntilReady, withPortRetry, type EngineInfoBase, type Run, type Started } from './engines';

/** What every simulator writes to state/connection.json once it listens. */
export interface SimulatorConnection {
  origin: string;
  tenantId: string;
  clientId: string;
  /** Refused by SharePoint app-only, as by SharePoint Online; kept for tests of that refusal. */
  clientSecret: string;
  certificatePath: string;
  certificateThumbprint: string;
  caFile: string;
}

/** The engine info fields both simulators report: their connection, with the origin named `url`. */
export type SimulatorInfoFields = Omit<SimulatorConnection, 'origin'> & {
  /** https://127.0.0.1:P (also the identity provider's authorityHost and the token audience) */
  url: string;
};

/** The engine info fields both simulators share (the connection, and where the process is). */
export type SimulatorInfoBase = SimulatorInfoFields & Omit<EngineInfoBase, 'name'>;

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

/**
 * `readyFiles`: further files of state/ the simulator writes once ready (read only after they exist).
 * `describe` builds the engine's info from the connection, the shared fields and the state folder.
 */
export async function startMicrosoftSimulator<N extends 'graph' | 'sharepoint'>(
  kind: N,
  dir: string,
  run: Run,
  readyFiles: string[],
  describe: (connection: SimulatorConnection, base: SimulatorInfoBase, state: string) => Started<N>['info'],
): Promise<Started<N>> {
  // Both simulators share one test CA (one caFile for a gateway reaching both).
  const tlsDir = path.join(path.dirname(dir), 'ms-tls');
  const main = path.join(__dirname, 'simulators', kind, 'main.ts');
  return withPortRetry(kind, async (port) => {
    const state = path.join(dir, 'state');
    const proc = launchProcess(kind, dir, run, {
      command: process.execPath,
      args: ['-r', require.resolve('ts-node/register/transpile-only'), main, '--port', String(port), '--dir', state, '--tls-dir', tlsDir],
      cwd: path.resolve(__dirname, '..', '..'),
      env: { ...process.env, TS_NODE_PROJECT: path.resolve(__dirname, '..', '..', 'tsconfig.json') },
      stopSignal: 'SIGTERM',
      watchdog: false,
    });
    const connectionFile = path.join(state, 'connection.json');
    await waitUntilReady(kind, proc, async () => {
      if (![connectionFile, ...readyFiles.map((f) => path.join(state, f))].every((f) => fs.existsSync(f))) return false;
      const c = JSON.parse(fs.readFileSync(connectionFile, 'utf8')) as { origin: string; caFile: string; port: number };
      return c.port === port && (await healthy(c.origin, c.caFile));
    });
    const c = JSON.parse(fs.readFileSync(connectionFile, 'utf8')) as SimulatorConnection;
    const base: SimulatorInfoBase = {
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url: c.origin,
      tenantId: c.tenantId,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      certificatePath: c.certificatePath,
      certificateThumbprint: c.certificateThumbprint,
      caFile: c.caFile,
    };
    return { info: describe(c, base, state), proc };
  });
}
