import * as net from 'node:net';
import { startGateway, type TestGateway } from '../support/gateway';

/**
 * The HTTP server's own time-outs (issue 16), from GATEWAY_HEADERS_TIMEOUT_MS and
 * GATEWAY_KEEP_ALIVE_TIMEOUT_MS: a slowloris client (a request head sent a byte at a time, never
 * finished) is disconnected, and an idle keep-alive connection is closed by the gateway. Each wait is
 * bounded by a guard far above the configured time-out, only so that a regression fails instead of hanging.
 */
const HEADERS_TIMEOUT_MS = 1000;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
const GUARD_MS = 30_000;

describe('HTTP server time-outs', () => {
  let gw: TestGateway;
  let port: number;

  beforeAll(async () => {
    gw = await startGateway({
      env: { GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), GATEWAY_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS) },
    });
    const server = gw.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('takes its time-outs from the configuration', () => {
    const server = gw.app.getHttpServer();
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(server.requestTimeout).toBe(3_600_000);
  });

  it('disconnects a slowloris client that sends its headers a byte at a time', async () => {
    const head = Buffer.from('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(10_000));
    const socket = net.connect(port, '127.0.0.1');
    let sent = 0;
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const outcome = await new Promise<string>((resolve) => {
      const drip = setInterval(() => {
        if (socket.destroyed || sent >= head.length) return;
        socket.write(head.subarray(sent, sent + 1));
        sent++;
      }, 50);
      const guard = setTimeout(() => resolve('still connected'), GUARD_MS);
      socket.on('close', () => {
        clearInterval(drip);
        clearTimeout(guard);
        resolve('closed');
      });
      socket.on('error', () => undefined);
    });
    socket.destroy();
    expect(outcome).toBe('closed');
    // Node answers 408 before closing; the head was never complete, so nothing was routed.
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(head.length);
  });

  it('closes an idle keep-alive connection after the keep-alive time-out', async () => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const outcome = await new Promise<string>((resolve) => {
      const guard = setTimeout(() => resolve('still open'), GUARD_MS);
      socket.on('close', () => {
        clearTimeout(guard);
        resolve('closed');
      });
      socket.on('error', () => undefined);
    });
    socket.destroy();
    expect(outcome).toBe('closed');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/Keep-Alive: timeout=1/i);
  });
});
