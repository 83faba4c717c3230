import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { answerClientErrors } from './client-errors';

/** A server whose handler never answers (a request under way), with the gateway's clientError answers. */
async function holdingServer(): Promise<{ server: Server; port: number }> {
  const server = createServer(() => undefined);
  answerClientErrors(server, 64 * 1024);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('answerClientErrors', () => {
  it('ends a connection at once when malformed bytes follow a request still under way (not left waiting for its answer)', async () => {
    const { server, port } = await holdingServer();
    try {
      const socket = connect(port, '127.0.0.1');
      const closed = new Promise<string>((resolve) => {
        let received = '';
        socket.on('data', (d: Buffer) => (received += d.toString()));
        socket.on('close', () => resolve(received));
        socket.on('error', () => undefined);
      });
      // A complete request the handler holds, then bytes no HTTP parser reads as a request.
      socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n\u0001\u0002 not http\r\n\r\n');
      // Before the fix the socket stayed open until the held answer ended, that is never: this waited for the test's time-out.
      expect(await closed).toBe('');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers an oversized head pipelined behind a request under way only after that answer', async () => {
    let release: (() => void) | undefined;
    const server = createServer({ maxHeaderSize: 1024 }, (_req, res) => {
      release = () => res.end('first');
    });
    answerClientErrors(server, 1024);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      const closed = new Promise<void>((resolve) => {
        socket.on('data', (d: Buffer) => (received += d.toString()));
        socket.on('close', () => resolve());
        socket.on('error', () => undefined);
      });
      socket.write(`GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second?x=${'a'.repeat(4096)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      while (!release) await new Promise((r) => setImmediate(r));
      release();
      socket.end();
      await closed;
      expect(received.indexOf('first')).toBeGreaterThan(0);
      expect(received.indexOf('431')).toBeGreaterThan(received.indexOf('first'));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
