import { createHash } from 'node:crypto';
import * as net from 'node:net';
import { CmisClient } from './cmis-client';
import { readHandingBack } from '../../../test/support/lent-reader';

/**
 * Content downloads against a plain TCP server that plays a CMIS content URL, so the test
 * can see what the client does to the connection: every byte arrives in order, and a
 * consumer that stops reading stops the transfer instead of letting memory grow.
 */
describe('CmisClient.getContent', () => {
  const BODY_BYTES = 64 * 1024 * 1024;
  let server: net.Server;
  let sent: number;
  let sentHash: string;
  let finished: Promise<void>;

  beforeEach(async () => {
    sent = 0;
    let markFinished!: () => void;
    finished = new Promise((resolve) => (markFinished = resolve));
    server = net.createServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n');
        const hash = createHash('sha256');
        let counter = 0;
        const pump = (): void => {
          while (sent < BODY_BYTES) {
            // Distinct bytes per chunk, so a reordered or overwritten chunk changes the hash.
            const chunk = Buffer.alloc(256 * 1024, counter++ % 251);
            sent += chunk.length;
            hash.update(chunk);
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
          sentHash = hash.digest('hex');
          socket.end(markFinished);
        };
        pump();
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = (): CmisClient =>
    new CmisClient({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/cmis/browser`, repositoryId: 'A1', user: 'u', password: 'p', timeoutMs: 30_000 });

  it('delivers every byte in order', async () => {
    const { status, stream } = await client().getContent('doc-1', undefined);
    expect(status).toBe(200);
    const hash = createHash('sha256');
    let received = 0;
    for await (const chunk of stream) {
      hash.update(chunk as Buffer);
      received += (chunk as Buffer).length;
    }
    await finished;
    expect(received).toBe(BODY_BYTES);
    expect(hash.digest('hex')).toBe(sentHash);
  });

  it('stops the transfer while the consumer does not read, and resumes when it does', async () => {
    const { stream } = await client().getContent('doc-1', undefined);
    stream.pause();
    // Give the server every chance to push the whole body if nothing held it back.
    let previous = -1;
    while (previous !== sent) {
      previous = sent;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // What is in flight is bounded by the socket buffers and one read buffer, far below the body.
    expect(sent).toBeLessThan(BODY_BYTES / 2);
    expect(stream.readableLength).toBeLessThanOrEqual(2 * 1024 * 1024);

    let received = 0;
    stream.on('data', (chunk: Buffer) => (received += chunk.length));
    stream.resume();
    await new Promise((resolve) => stream.once('end', resolve));
    expect(received).toBe(BODY_BYTES);
  });

  it('keeps every chunk intact for a reader that holds on to them all', async () => {
    const { stream } = await client().getContent('doc-1', undefined);
    const kept: Buffer[] = [];
    for await (const chunk of stream) kept.push(chunk as Buffer);
    await finished;
    const hash = createHash('sha256');
    for (const chunk of kept) hash.update(chunk);
    expect(kept.reduce((n, c) => n + c.length, 0)).toBe(BODY_BYTES);
    expect(hash.digest('hex')).toBe(sentHash);
  });

  it('reads into the memory of chunks handed back, never into chunks still held', async () => {
    const { stream } = await client().getContent('doc-1', undefined);
    const read = await readHandingBack(stream);
    await finished;
    expect(read.received).toBe(BODY_BYTES);
    expect(read.sha256).toBe(sentHash);
    // 64 MiB through a handful of 4 MiB slabs instead of 16 or more fresh ones.
    expect(read.memories).toBeLessThanOrEqual(6);
  });
});
