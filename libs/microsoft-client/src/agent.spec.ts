import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Agent, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCa } from '../../../test/support/test-ca';
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
  beforeAll(async () => {
    const { key, cert } = makeTestCa(dir);
    server = createServer({ key, cert }, (req, res) => res.end(`port ${req.socket.remotePort}`));
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
