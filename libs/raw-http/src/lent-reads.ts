import * as net from 'node:net';
import { Readable } from 'node:stream';
import { SlabPool, type Slab } from './slab-pool';

/**
 * A plain TCP connection read as a stream whose chunks are **lent**: they are
 * views of reusable slabs, and a reader that is done with a chunk (written to
 * the client's socket, say) hands it back with `returnChunk`, so its memory is
 * read into again instead of a fresh buffer being allocated for every read.
 *
 * Why: every fresh read buffer is a new ArrayBuffer that V8 counts as external
 * memory, and 100 MB of them per download made the gateway garbage-collect
 * several times per download — scavenges, and mark-compacts of its whole heap
 * (Nest, OpenAPI, validators: ~40 MB). A relay of a few lines, with a heap of
 * 4 MB, pays nearly nothing for the same churn; the gateway spent about half
 * its CPU on it and served 0.5–0.6 × the relay (bench/cmis-download).
 *
 * Reads land in 1 MiB windows of 4 MiB slabs (net's `onread`): with the default
 * 64 KiB reads the gateway passed on about a third of the server's throughput.
 * A slab is read into again only once it is full and every chunk cut from it
 * has come back. Chunks a reader keeps (or never returns: any reader that does
 * not know the protocol) simply keep their slab out of the pool, and the
 * garbage collector takes it as it would any buffer. Returning a chunk twice,
 * or one that was not lent, does nothing.
 */
export interface ChunkLender {
  returnChunk(chunk: Uint8Array): void;
}

const READ_BYTES = 1024 * 1024;
const SLAB_BYTES = 4 * READ_BYTES;
/** Spare slabs kept for the next reads, process-wide: two or three per download in flight. */
const SPARE_SLABS = 8;

const pool = new SlabPool(SLAB_BYTES, SPARE_SLABS);

/** How many slabs wait in the pool (for tests). */
export function spareSlabCount(): number {
  return pool.spareCount;
}

export class LentReadConnection extends Readable implements ChunkLender {
  /** For writing the request, the timeout and destroying. */
  readonly socket: net.Socket;
  private slab: Slab | undefined;
  private readonly lent = new WeakMap<Uint8Array, Slab>();
  private ended = false;
  /** Bytes read from the connection so far (headers included). */
  private bytesIn = 0;
  /** When set: the connection must carry this many bytes before it ends, or the stream fails. */
  private expectedBytes: number | undefined;

  constructor(host: string, port: number) {
    // The high-water mark is what pauses the socket while the reader is busy: one read's worth.
    super({ highWaterMark: READ_BYTES });
    this.socket = net.connect({
      host,
      port,
      onread: { buffer: () => this.nextWindow(), callback: (bytes: number, window: Uint8Array) => this.received(bytes, window) },
    });
    this.socket.once('end', () => {
      this.ended = true;
      if (this.expectedBytes !== undefined && this.bytesIn < this.expectedBytes) {
        this.destroy(new Error(`the connection closed after ${this.bytesIn} of the ${this.expectedBytes} bytes announced`));
        return;
      }
      this.push(null);
    });
    this.socket.once('error', (e) => this.destroy(e));
    this.socket.once('close', () => {
      // Only now does no read target the current slab any more.
      if (this.slab) pool.retire(this.slab);
      this.slab = undefined;
      // Closed without an end or an error (destroyed from here): readers must not wait forever.
      if (!this.ended && !this.destroyed) this.destroy(new Error('the connection closed before the answer was complete'));
    });
  }

  returnChunk(chunk: Uint8Array): void {
    const slab = this.lent.get(chunk);
    if (!slab) return;
    this.lent.delete(chunk);
    pool.returned(slab);
  }

  /** `part` (a view of `whole`, e.g. what follows the answer's headers) is lent in its place. */
  relend(whole: Uint8Array, part: Uint8Array): void {
    const slab = this.lent.get(whole);
    if (!slab) return;
    this.lent.delete(whole);
    this.lent.set(part, slab);
  }

  /**
   * The connection must carry `total` bytes in all (what was read so far included) before the server
   * closes it; an earlier end fails the stream instead of ending it. For answers that end at the close
   * (HTTP/1.0) but announce their length: a cut connection is then an error, not a short body.
   */
  expectTotalBytes(total: number): void {
    this.expectedBytes = total;
  }

  /** Bytes read from the connection so far. */
  get bytesRead(): number {
    return this.bytesIn;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }

  private nextWindow(): Uint8Array {
    if (!this.slab || this.slab.bytes.length - this.slab.used < READ_BYTES) {
      if (this.slab) pool.retire(this.slab);
      this.slab = pool.take();
    }
    return this.slab.bytes.subarray(this.slab.used, this.slab.used + READ_BYTES);
  }

  /** net calls this with the window it last got from nextWindow, before asking for the next one. */
  private received(bytes: number, window: Uint8Array): boolean {
    const slab = this.slab as Slab;
    slab.used += bytes;
    this.bytesIn += bytes;
    const chunk = Buffer.from(window.buffer, window.byteOffset, bytes);
    slab.lent++;
    this.lent.set(chunk, slab);
    if (!this.push(chunk)) this.socket.pause();
    return true;
  }
}
