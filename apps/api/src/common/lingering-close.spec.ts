import { createServer, type Server } from 'node:http';
import * as net from 'node:net';
import { lingerOnUnreadBody } from './lingering-close';

/** A server that answers 413 at once, before reading the body, then lingers with small bounds. */
async function refusingServer(limits: { maxBytes: number; maxMs: number }) {
  const server: Server = createServer((req, res) => {
    res.statusCode = 413;
    res.end('too large');
    lingerOnUnreadBody(req, limits);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Sends a head declaring `declared` bytes, and `body` bytes of it once the answer came (so the body
 * is surely still arriving when the server answers), then `then`; resolves when the server has
 * closed, or when a second answer came.
 */
function exchange(port: number, declared: number, body: number, then?: string): Promise<{ answer: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: ${declared}\r\n\r\n`));
    socket.on('data', (d: Buffer) => {
      const first = answer === '';
      answer += d.toString('latin1');
      if (first) socket.write(Buffer.alloc(body, 1), () => then !== undefined && socket.write(then));
      if (then !== undefined && answer.split('HTTP/1.1 413').length === 3) {
        socket.destroy();
        resolve({ answer, closedByServer: false });
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer, closedByServer: true }));
  });
}

describe('lingerOnUnreadBody', () => {
  it('reads and drops a body that ends within the bounds: the connection takes the next request', async () => {
    const server = await refusingServer({ maxBytes: 64 * 1024, maxMs: 60_000 });
    try {
      const next = 'PUT /y HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n';
      const { answer, closedByServer } = await exchange(server.port, 32 * 1024, 32 * 1024, next);
      expect(closedByServer).toBe(false);
      expect(answer.match(/HTTP\/1\.1 413/g)).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('closes the connection once more than maxBytes of the body arrived after the answer', async () => {
    const server = await refusingServer({ maxBytes: 64 * 1024, maxMs: 60_000 });
    try {
      const { answer, closedByServer } = await exchange(server.port, 1024 * 1024, 1024 * 1024);
      expect(closedByServer).toBe(true);
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
    } finally {
      await server.close();
    }
  });

  it('lets a client that keeps sending and reads late see the answer before any write fails (a FIN, not a reset)', async () => {
    // Node's fetch fails a request on its first failed write, even with the answer already received:
    // past the byte bound the gateway must stop reading and close its side, not reset the connection.
    const server = await refusingServer({ maxBytes: 64 * 1024, maxMs: 60_000 });
    try {
      const seen = await new Promise<{ answer: string; writeFailedFirst: boolean }>((resolve) => {
        let answer = '';
        let writeFailed = false;
        const socket = net.connect(server.port, '127.0.0.1', () => {
          socket.pause(); // a busy client: it goes on sending, and reads only later
          socket.write(`PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`);
          const send = () => {
            while (!writeFailed && socket.write(Buffer.alloc(64 * 1024, 1)));
          };
          socket.on('drain', send);
          send();
          setTimeout(() => {
            const failedBeforeReading = writeFailed;
            socket.on('data', (d: Buffer) => {
              answer += d.toString('latin1');
              if (answer.endsWith('too large')) resolve({ answer, writeFailedFirst: failedBeforeReading });
            });
            socket.on('close', () => resolve({ answer, writeFailedFirst: failedBeforeReading }));
            socket.resume();
          }, 300);
        });
        socket.on('error', () => (writeFailed = true));
      });
      expect(seen.writeFailedFirst).toBe(false);
      expect(seen.answer).toMatch(/^HTTP\/1\.1 413[^]*too large$/);
    } finally {
      await server.close();
    }
  });

  it('cuts the connection after maxMs when the rest of the body does not come', async () => {
    const server = await refusingServer({ maxBytes: 64 * 1024, maxMs: 50 });
    try {
      const { answer, closedByServer } = await exchange(server.port, 1024 * 1024, 1024);
      expect(closedByServer).toBe(true);
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
    } finally {
      await server.close();
    }
  });

  it('leaves a request whose body has all arrived to Node', async () => {
    const server = await refusingServer({ maxBytes: 0, maxMs: 0 });
    try {
      // maxBytes 0 would cut any drained byte: none is drained, so the connection takes the next request.
      const { closedByServer } = await exchange(server.port, 0, 0, 'PUT /y HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n');
      expect(closedByServer).toBe(false);
    } finally {
      await server.close();
    }
  });
});
