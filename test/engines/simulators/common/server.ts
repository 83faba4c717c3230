/**
 * The HTTPS server every simulator runs on: TLS from tls.ts, the identity provider, the fault switches
 * and request log, then the simulator's own handler. A simulator's main.ts calls runSimulatorMain(), so
 * the engine harness launches it as `node -r ts-node/register/transpile-only <main.ts> --port P --dir D
 * --tls-dir T`; it stops on SIGTERM/SIGINT and when its stdin closes (the harness died), like the
 * engines of our own build.
 *
 * On start it writes `<dir>/connection.json` (origin, tenant, app credentials, caFile): what a client
 * needs to reach it, read by the harness to build the engine's `connectorParams`.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Faults, type ThrottleBody } from './faults';
import { IdentityProvider, type AppRegistration } from './identity';
import { ensureAppCertificate, ensureTestTls, type AppCertificate, type TestTls } from './tls';

export const SIMULATOR_HOST = '127.0.0.1';

export interface SimulatorContext {
  /** https://127.0.0.1:PORT */
  origin: string;
  /** The simulator's state folder (content files, metadata). */
  dir: string;
  tls: TestTls;
  identity: IdentityProvider;
  faults: Faults;
  tenantId: string;
  /** The app registration the harness hands to connectors. */
  app: { clientId: string; clientSecret: string; certificate: AppCertificate };
}

export type SimulatorHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

export interface SimulatorDefinition {
  name: string;
  /** Resources (token audiences) this simulator serves, e.g. its own origin. */
  resources(origin: string): string[];
  /** Roles granted to the harness's app. */
  roles: string[];
  /** The service's throttling body for 429/503. */
  throttleBody: ThrottleBody;
  /** The service's body for an unexpected failure (500). */
  internalErrorBody(message: string): unknown;
  createHandler(context: SimulatorContext): SimulatorHandler | Promise<SimulatorHandler>;
}

export interface StartedSimulator {
  origin: string;
  port: number;
  context: SimulatorContext;
  close(): Promise<void>;
}

export interface StartOptions {
  port: number;
  dir: string;
  /** Where the test CA and certificates live (shared between simulators); default `<dir>/tls`. */
  tlsDir?: string;
  tenantId?: string;
}

/** Starts `definition` on 127.0.0.1:port over HTTPS. */
export async function startSimulator(definition: SimulatorDefinition, options: StartOptions): Promise<StartedSimulator> {
  fs.mkdirSync(options.dir, { recursive: true });
  const tlsDir = options.tlsDir ?? path.join(options.dir, 'tls');
  const tls = ensureTestTls(tlsDir);
  const certificate = ensureAppCertificate(tlsDir, 'gateway-app');
  const server = https.createServer({ cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile), keepAliveTimeout: 30_000 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, SIMULATOR_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `https://${SIMULATOR_HOST}:${port}`;
  const tenantId = options.tenantId ?? '6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5';
  const app = { clientId: crypto.randomUUID(), clientSecret: crypto.randomBytes(24).toString('base64url'), certificate };
  const registration: AppRegistration = {
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    certificates: [fs.readFileSync(certificate.certFile, 'utf8')],
    roles: definition.roles,
    displayName: 'Content Gateway (test)',
  };
  const identity = new IdentityProvider({ origin, tenantId, tenantAliases: ['contoso.onmicrosoft.com'], apps: [registration], resources: definition.resources(origin) });
  const faults = new Faults(() => identity.expireAll());
  const context: SimulatorContext = { origin, dir: options.dir, tls, identity, faults, tenantId, app };
  const handler = await definition.createHandler(context);

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    faults.record(req, res);
    const run = async () => {
      if (await faults.handleControl(req, res, url.pathname, url.searchParams)) return;
      const isIdentity = /^\/[^/]+\/(v2\.0\/\.well-known\/|discovery\/v2\.0\/keys|oauth2\/v2\.0\/token)/.test(url.pathname);
      if (isIdentity) {
        if (await faults.beforeIdentity(req, res, definition.throttleBody)) return;
        if (await identity.handle(req, res, url.pathname)) return;
      }
      if (await faults.beforeApi(req, res, definition.throttleBody)) return;
      await handler(req, res, url);
    };
    run().catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`[${definition.name}] ${req.method ?? ''} ${req.url ?? ''}: ${error instanceof Error ? (error.stack ?? message) : message}\n`);
      if (!res.headersSent) {
        const text = JSON.stringify(definition.internalErrorBody(message));
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } else {
        res.destroy();
      }
    });
  });

  fs.writeFileSync(
    path.join(options.dir, 'connection.json'),
    JSON.stringify(
      {
        origin,
        port,
        tenantId,
        authorityHost: origin,
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        certificatePath: certificate.pemFile,
        certificateThumbprint: certificate.thumbprint,
        certificateThumbprintSha256: certificate.thumbprintSha256,
        caFile: tls.caFile,
      },
      null,
      2,
    ),
  );

  return {
    origin,
    port,
    context,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What `<dir>/connection.json` holds. */
export interface SimulatorConnection {
  origin: string;
  port: number;
  tenantId: string;
  authorityHost: string;
  clientId: string;
  clientSecret: string;
  certificatePath: string;
  certificateThumbprint: string;
  certificateThumbprintSha256: string;
  caFile: string;
}

export function readConnection(dir: string): SimulatorConnection {
  return JSON.parse(fs.readFileSync(path.join(dir, 'connection.json'), 'utf8')) as SimulatorConnection;
}

function argValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

/** Entry point of a simulator process: `--port P --dir D [--tls-dir T]`. */
export function runSimulatorMain(definition: SimulatorDefinition): void {
  const args = process.argv.slice(2);
  const dir = argValue(args, '--dir');
  if (!dir) throw new Error(`${definition.name} simulator: --dir is required`);
  const port = Number(argValue(args, '--port') ?? '0');
  startSimulator(definition, { port, dir: path.resolve(dir), tlsDir: argValue(args, '--tls-dir') })
    .then((started) => {
      process.stdout.write(`${definition.name} simulator listening on ${started.origin}\n`);
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        void started.close().then(() => process.exit(0));
        setTimeout(() => process.exit(0), 5_000).unref();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      // The harness keeps our stdin open while it lives; its end means the harness is gone.
      process.stdin.on('end', stop);
      process.stdin.on('error', stop);
      process.stdin.resume();
    })
    .catch((error: unknown) => {
      process.stderr.write(`${definition.name} simulator failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    });
}
