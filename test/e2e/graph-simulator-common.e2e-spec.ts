/**
 * The simulators' common parts (test/engines/simulators/common): the identity provider driven by
 * @azure/msal-node (client secret and both certificate assertion forms), bearer checks, the fault
 * switches and the request log, on a minimal simulator whose one API route echoes the token's claims.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfidentialClientApplication, type Configuration } from '@azure/msal-node';
import { SimulatorControl } from '../engines/simulators/common/control';
import { caNetworkModule } from '../engines/simulators/common/msal-network';
import { startSimulator, type SimulatorDefinition, type StartedSimulator } from '../engines/simulators/common/server';

const errorBody = (code: string, message: string) => ({ error: { code, message } });

const definition: SimulatorDefinition = {
  name: 'echo',
  resources: (origin) => [origin],
  roles: ['Files.ReadWrite.All'],
  throttleBody: () => errorBody('activityLimitReached', 'The request has been throttled'),
  internalErrorBody: (message) => errorBody('generalException', message),
  createHandler: (context) => async (req, res, url) => {
    const check = context.identity.verifyBearer(req.headers.authorization, context.origin);
    if (!check.ok) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody('InvalidAuthenticationToken', check.message)));
      return;
    }
    if (url.pathname === '/download') {
      const body = Buffer.alloc(1 << 20, 7);
      res.writeHead(200, { 'content-length': body.length });
      const cut = context.faults.downloadStream(res);
      if (cut) {
        cut.pipe(res);
        cut.end(body);
      } else res.end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(check.claims));
  },
};

function get(sim: StartedSimulator, pathname: string, token?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string; error?: Error }> {
  return new Promise((resolve) => {
    const req = https.request(new URL(pathname, sim.origin), { ca: fs.readFileSync(sim.context.tls.caFile), headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('latin1') }));
      res.on('error', (error) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('latin1'), error }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('latin1'), error: new Error('aborted') }));
    });
    req.on('error', (error) => resolve({ status: 0, headers: {}, body: '', error }));
    req.end();
  });
}

describe('simulator common: identity provider, faults, request log', () => {
  let dir: string;
  let sim: StartedSimulator;
  let control: SimulatorControl;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-common-'));
    sim = await startSimulator(definition, { port: 0, dir });
    control = new SimulatorControl(sim.origin, sim.context.tls.caFile);
  });

  afterAll(async () => {
    await sim?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function msal(auth: Partial<Configuration['auth']>): ConfidentialClientApplication {
    const host = new URL(sim.origin).host;
    return new ConfidentialClientApplication({
      auth: { clientId: sim.context.app.clientId, authority: `${sim.origin}/${sim.context.tenantId}`, knownAuthorities: [host], ...auth },
      system: { networkClient: caNetworkModule(sim.context.tls.caFile) },
    });
  }

  it('issues a token for a client secret that the API accepts, with tenant, app and roles', async () => {
    const result = await msal({ clientSecret: sim.context.app.clientSecret }).acquireTokenByClientCredential({ scopes: [`${sim.origin}/.default`] });
    expect(result?.accessToken).toBeTruthy();
    const answer = await get(sim, '/me', result!.accessToken);
    expect(answer.status).toBe(200);
    const claims = JSON.parse(answer.body) as Record<string, unknown>;
    expect(claims).toMatchObject({ aud: sim.origin, tid: sim.context.tenantId, appid: sim.context.app.clientId, roles: ['Files.ReadWrite.All'] });
  });

  it('issues tokens for certificate assertions signed with the SHA-256 (PS256) and SHA-1 (RS256) thumbprints', async () => {
    const { certificate } = sim.context.app;
    const privateKey = fs.readFileSync(certificate.keyFile, 'utf8');
    for (const clientCertificate of [{ thumbprintSha256: certificate.thumbprintSha256, privateKey }, { thumbprint: certificate.thumbprint, privateKey }]) {
      const result = await msal({ clientCertificate }).acquireTokenByClientCredential({ scopes: [`${sim.origin}/.default`] });
      expect((await get(sim, '/me', result!.accessToken)).status).toBe(200);
    }
  });

  it('refuses a wrong secret, a certificate it does not know and an unknown resource', async () => {
    await expect(msal({ clientSecret: 'wrong' }).acquireTokenByClientCredential({ scopes: [`${sim.origin}/.default`] })).rejects.toThrow(/7000215/);
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-other-'));
    try {
      const { ensureAppCertificate } = await import('../engines/simulators/common/tls');
      const stranger = ensureAppCertificate(other, 'stranger');
      await expect(
        msal({ clientCertificate: { thumbprintSha256: stranger.thumbprintSha256, privateKey: fs.readFileSync(stranger.keyFile, 'utf8') } }).acquireTokenByClientCredential({
          scopes: [`${sim.origin}/.default`],
        }),
      ).rejects.toThrow(/700027/);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
    await expect(msal({ clientSecret: sim.context.app.clientSecret }).acquireTokenByClientCredential({ scopes: ['https://elsewhere.example/.default'] })).rejects.toThrow(/500011/);
  });

  it('answers 401 without a token, with a forged one, and after expireTokens', async () => {
    expect((await get(sim, '/me')).status).toBe(401);
    const result = await msal({ clientSecret: sim.context.app.clientSecret }).acquireTokenByClientCredential({ scopes: [`${sim.origin}/.default`] });
    const token = result!.accessToken;
    const [head, body] = token.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), roles: ['Sites.FullControl.All'] })).toString('base64url');
    expect((await get(sim, '/me', `${head}.${forgedBody}.${token.split('.')[2]}`)).status).toBe(401);
    expect((await get(sim, '/me', token)).status).toBe(200);
    await control.setFaults({ expireTokens: true });
    expect((await get(sim, '/me', token)).status).toBe(401);
  });

  it('throttles the next N calls with Retry-After, logs every call, and cuts a download after N bytes', async () => {
    const result = await msal({ clientSecret: sim.context.app.clientSecret }).acquireTokenByClientCredential({ scopes: [`${sim.origin}/.default`], skipCache: true });
    const token = result!.accessToken;
    const mark = await control.mark();
    await control.setFaults({ throttle: { count: 2, status: 503, retryAfterSeconds: 7 } });
    const first = await get(sim, '/me', token);
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('7');
    expect(JSON.parse(first.body)).toEqual(errorBody('activityLimitReached', 'The request has been throttled'));
    expect((await get(sim, '/me', token)).status).toBe(503);
    expect((await get(sim, '/me', token)).status).toBe(200);
    const log = await control.requests(mark);
    expect(log.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['GET /me 503', 'GET /me 503', 'GET /me 200']);

    await control.setFaults({ dropDownload: { afterBytes: 1000 } });
    const cut = await get(sim, '/download', token);
    expect(cut.body.length).toBe(1000);
    expect(cut.error).toBeDefined();
    const whole = await get(sim, '/download', token);
    expect(whole.body.length).toBe(1 << 20);
    await expect(control.setFaults({ throttle: { count: 0 } })).rejects.toThrow(/throttle.count/);
  });
});
