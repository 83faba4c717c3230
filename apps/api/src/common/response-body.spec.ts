import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { sendBody, type ChunkLender } from './response-body';

const CHUNK_BYTES = 256 * 1024;
const CHUNKS = 128; // 32 MiB: far more than the socket buffers between server and client hold

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

describe('sendBody', () => {
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
