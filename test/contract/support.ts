import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'supertest';
import type { TestGateway } from '../support/gateway';

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** supertest parser that keeps any body as raw bytes (downloads, and the JSON errors of download routes). */
export function rawBody(response: unknown, callback: (err: Error | null, body: Buffer) => void): void {
  // In Node, superagent hands the parser the IncomingMessage itself.
  const res = response as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
  res.on('error', (e: Error) => callback(e, Buffer.alloc(0)));
}

/** The JSON error of a response read with rawBody. */
export function errorOf(res: Response): { success: boolean; message: string; error: Record<string, unknown> } {
  return JSON.parse((res.body as Buffer).toString('utf8'));
}

/** Bytes whose every offset is distinguishable, so a wrong range cannot pass by accident. */
export function patterned(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return b;
}

/**
 * A request supertest cannot make: a chunked body (or none), written by hand,
 * against a listening copy of the gateway's server.
 */
export async function chunkedRequest(
  gw: TestGateway,
  method: string,
  path: string,
  headers: Record<string, string>,
  chunks: Buffer[],
): Promise<{ status: number; body: string }> {
  const server = gw.app.getHttpServer();
  const listening = server.listening;
  if (!listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, 'Transfer-Encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      for (const c of chunks) req.write(c);
      req.end();
    });
  } finally {
    if (!listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Sends the start of a request body, then drops the connection, as a client that crashed mid-upload would.
 * Resolves once the gateway is done with the request: its handler has settled and the answer it wrote
 * (to a socket already gone) has ended, so whatever the upload left behind is final. No fixed waits:
 * the drop comes once the gateway has read every byte sent, the return once its answer is written.
 */
export async function abortedUpload(gw: TestGateway, method: string, path: string, headers: Record<string, string>, start: Buffer): Promise<void> {
  const server = gw.app.getHttpServer();
  const listening = server.listening;
  if (!listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let handled: http.ServerResponse | undefined;
  let handledRequest: http.IncomingMessage | undefined;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === path && req.method === method) [handledRequest, handled] = [req, res];
  };
  server.prependListener('request', onRequest);
  try {
    const { port } = server.address() as AddressInfo;
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    const answered = new Promise<void>((resolve) => req.on('response', () => resolve()));
    req.on('error', () => undefined); // the drop below
    await new Promise<void>((resolve) => req.write(start, () => resolve()));
    const sent = req.socket?.bytesWritten ?? 0;
    const early = await Promise.race([
      answered.then(() => true),
      until(() => (handledRequest?.socket?.bytesRead ?? 0) >= sent, 'the gateway to read the start of the upload').then(() => false),
    ]);
    if (early) throw new Error(`${method} ${path} answered before the upload was dropped`);
    req.destroy();
    await until(() => handled?.writableEnded === true, 'the gateway to finish with the dropped upload');
  } finally {
    server.off('request', onRequest);
    if (!listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls a condition until it holds, failing after a deadline (never a fixed wait standing in for an event). */
async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
