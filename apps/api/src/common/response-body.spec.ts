import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { sendBody, type ChunkLender } from './response-body';

const CHUNK_BYTES = 256 * 1024;
const CHUNKS = 128; // 32 MiB: far more than the socket buffers between server and client hold

/** A source of `chunks` distinct chunks that counts what it was asked to produce. */
class CountingSource extends Readable {
  produced = 0;
  readonly sentHash = createHash('sha256');

  constructor(private readonly chunks: number) {
    super({ highWaterMark: 2 * CHUNK_BYTES });
  }

  override _read(): void {
    if (this.produced === this.chunks) return void this.push(null);
    const chunk = Buffer.alloc(CHUNK_BYTES, this.produced++ % 251);
    this.sentHash.update(chunk);
    this.push(chunk);
  }
}

describe('sendBody', () => {
  let server: http.Server;
  let source: CountingSource;
  let announced: number;
  let outcome: Promise<unknown>;

  beforeEach(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader('Content-Length', String(announced));
      outcome = sendBody(source, res, announced).then(
        () => 'sent',
        (e: Error) => e.message,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Reads the answer, pausing `pauseMs` first; resolves with its bytes' hash and count, or how it failed. */
  function download(pauseMs: number, whilePaused?: () => void): Promise<{ bytes: number; sha256: string } | { failed: string }> {
    return new Promise((resolve) => {
      const received = createHash('sha256');
      let bytes = 0;
      http
        .get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent: false }, (res) => {
          res.pause();
          setTimeout(() => {
            whilePaused?.();
            res.resume();
          }, pauseMs);
          res.on('data', (chunk: Buffer) => {
            received.update(chunk);
            bytes += chunk.length;
          });
          res.on('end', () => resolve({ bytes, sha256: received.digest('hex') }));
          res.on('error', (e) => resolve({ failed: e.message }));
        })
        .on('error', (e) => resolve({ failed: e.message }));
    });
  }

  it('pauses the source while the client does not read, and delivers every byte in order', async () => {
    source = new CountingSource(CHUNKS);
    announced = CHUNK_BYTES * CHUNKS;
    let producedWhilePaused = 0;
    const got = await download(300, () => (producedWhilePaused = source.produced));
    // What waits is bounded by the socket buffers and the source's high-water mark, far below the body.
    expect(producedWhilePaused).toBeLessThan(CHUNKS / 2);
    expect(got).toEqual({ bytes: CHUNK_BYTES * CHUNKS, sha256: source.sentHash.digest('hex') });
    expect(await outcome).toBe('sent');
  });

  it('cuts the response when the content is shorter than announced, and never sends more than announced', async () => {
    announced = 4 * CHUNK_BYTES;
    source = new CountingSource(3);
    expect(await download(0)).toHaveProperty('failed');
    expect(await outcome).toMatch(/ended after 786432 of the 1048576 bytes/);
    source = new CountingSource(5);
    const got = await download(0);
    // The announced bytes may all have gone out before the surplus showed up; no byte beyond them does.
    if ('bytes' in got) expect(got.bytes).toBe(announced);
    expect(await outcome).toMatch(/longer than the 1048576 bytes/);
  });
});

/**
 * A source that lends its chunks like the CMIS connector's reads: a handful of
 * buffers, each filled again as soon as it is handed back. Handing a chunk back
 * before it was written would put other bytes on the wire.
 */
class LendingSource extends Readable implements ChunkLender {
  readonly spare: Buffer[] = [];
  allocated = 0;
  returned = 0;
  private produced = 0;
  readonly sentHash = createHash('sha256');

  constructor() {
    // Like a socket, it keeps reading (into spare buffers) while the consumer waits for a drain.
    super({ highWaterMark: 8 * CHUNK_BYTES });
  }

  override _read(): void {
    if (this.produced === CHUNKS) return void this.push(null);
    const chunk = this.spare.pop() ?? (this.allocated++, Buffer.alloc(CHUNK_BYTES));
    chunk.fill(this.produced++ % 251);
    this.sentHash.update(chunk);
    this.push(chunk);
  }

  returnChunk(chunk: Uint8Array): void {
    this.returned++;
    this.spare.push(chunk as Buffer);
  }
}

describe('sendBody with a source that lends its chunks', () => {
  let server: http.Server;
  let source: LendingSource;

  beforeEach(async () => {
    source = new LendingSource();
    server = http.createServer((_req, res) => {
      res.setHeader('Content-Length', String(CHUNK_BYTES * CHUNKS));
      void sendBody(source, res, CHUNK_BYTES * CHUNKS);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('hands each lent chunk back once the client socket has it, so reused memory never reaches the wire', async () => {
    const received = createHash('sha256');
    let bytes = 0;
    await new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent: false }, (res) => {
          // A slow start: the server's writes queue up behind full socket buffers meanwhile.
          res.pause();
          setTimeout(() => res.resume(), 300);
          res.on('data', (chunk: Buffer) => {
            received.update(chunk);
            bytes += chunk.length;
          });
          res.on('end', resolve);
          res.on('error', reject);
        })
        .on('error', reject);
    });
    expect(bytes).toBe(CHUNK_BYTES * CHUNKS);
    expect(received.digest('hex')).toBe(source.sentHash.digest('hex'));
    // Every chunk came back, and a few buffers carried the whole body.
    expect(source.returned).toBe(CHUNKS);
    expect(source.allocated).toBeLessThan(CHUNKS / 4);
  });
});
