import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Agent, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgents } from './agent';

/**
 * A connector's https agent against a local HTTPS server signed by a throw-away CA: it trusts the
 * connector's caFile, reuses its sockets, and keys them by a short name (the trust goes in as a secure
 * context: a `ca` of the public roots made every request build a 216 KB socket name).
 */
describe('createAgents', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-test-'));
  let server: Server;
  let port = 0;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

  beforeAll(async () => {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test CA');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '2', '-extfile', 'ext.cnf');
    server = createServer({ key: readFileSync(join(dir, 'srv.key')), cert: readFileSync(join(dir, 'srv.pem')) }, (req, res) => res.end(`port ${req.socket.remotePort}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (agent: Agent) =>
    new Promise<{ body: string; socket: Socket }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ body, socket: req.socket! }));
      });
      req.on('error', reject);
      req.end();
    });

  it('trusts the caFile; two calls share one keep-alive socket', async () => {
    const agents = createAgents({ caFile: join(dir, 'ca.pem') });
    try {
      const first = await get(agents.https);
      const second = await get(agents.https);
      expect(first.body).toMatch(/^port \d+$/);
      expect(second.body).toBe(first.body);
      expect(second.socket).toBe(first.socket);
    } finally {
      agents.https.destroy();
    }
  });

  it('without the caFile the server is not trusted (the public roots only)', async () => {
    const agents = createAgents();
    try {
      await expect(get(agents.https)).rejects.toMatchObject({ code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/) });
      expect(agents.ca).toBeUndefined();
    } finally {
      agents.https.destroy();
    }
  });

  it('keeps the trust for the content transport, and out of the socket name the agent builds per request', () => {
    const agents = createAgents({ caFile: join(dir, 'ca.pem') });
    try {
      expect(agents.ca?.at(-1)).toBe(readFileSync(join(dir, 'ca.pem'), 'utf8'));
      expect(agents.ca!.length).toBeGreaterThan(100);
      // The name of a request's options as the agent merges them (its own options first, as addRequest does).
      const name = agents.https.getName({ ...agents.https.options, host: '127.0.0.1', port });
      expect(name.length).toBeLessThan(200);
    } finally {
      agents.https.destroy();
    }
  });
});
