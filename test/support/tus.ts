import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tus from 'tus-js-client';

/** Helpers of the resumable-upload tests and bench: the real tus client (its Node build), a source file, a counting proxy. */

export interface SourceFile {
  path: string;
  size: number;
  sha256: string;
  remove: () => void;
}

/** A file of `size` random bytes written as a stream (1 MiB at a time, never whole in memory), with its SHA-256. */
export async function makeSourceFile(size: number, dir = os.tmpdir()): Promise<SourceFile> {
  const file = path.join(dir, `tus-source-${process.pid}-${randomBytes(4).toString('hex')}.bin`);
  const hash = createHash('sha256');
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let left = size; left > 0; ) {
      const chunk = randomBytes(Math.min(left, 1024 * 1024));
      hash.update(chunk);
      left -= chunk.length;
      yield chunk;
    }
  }
  await pipeline(chunks(), fs.createWriteStream(file));
  return { path: file, size, sha256: hash.digest('hex'), remove: () => fs.rmSync(file, { force: true }) };
}

/** SHA-256 of a stream, read as it comes. */
export async function streamSha256(stream: NodeJS.ReadableStream): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** tus-js-client's URL storage kept in memory, shared by the clients of one test: a new client finds the upload an earlier one started. */
export class MemoryUrlStorage implements tus.UrlStorage {
  private readonly entries = new Map<string, tus.PreviousUpload & { fingerprint: string }>();
  private next = 0;

  findAllUploads(): Promise<tus.PreviousUpload[]> {
    return Promise.resolve([...this.entries.values()]);
  }

  findUploadsByFingerprint(fingerprint: string): Promise<tus.PreviousUpload[]> {
    return Promise.resolve([...this.entries.values()].filter((e) => e.fingerprint === fingerprint));
  }

  removeUpload(urlStorageKey: string): Promise<void> {
    this.entries.delete(urlStorageKey);
    return Promise.resolve();
  }

  addUpload(fingerprint: string, upload: tus.PreviousUpload): Promise<string> {
    const key = `upload-${this.next++}`;
    this.entries.set(key, { ...upload, fingerprint, urlStorageKey: key });
    return Promise.resolve(key);
  }
}

export interface TusRun {
  upload: tus.Upload;
  /** Settles with the upload URL on success, rejects with the client's error. */
  done: Promise<string>;
  /** Requests the client sent (every HEAD, POST, PATCH). */
  requests: () => number;
}

export interface TusRunOptions {
  endpoint: string;
  authorization: string;
  chunkSize: number;
  urlStorage: tus.UrlStorage;
  metadata?: Record<string, string>;
  /** Resume the upload a previous client stored under this file's fingerprint. */
  resume?: boolean;
  onProgress?: (sent: number, total: number, upload: tus.Upload) => void;
}

/** One tus-js-client upload of `file` (a fs.ReadStream: the client reopens the file at the offset it resumes from). No automatic retries. */
export function runTus(file: SourceFile, options: TusRunOptions): TusRun {
  let requests = 0;
  let resolveDone!: (url: string) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  const upload: tus.Upload = new tus.Upload(fs.createReadStream(file.path), {
    endpoint: options.endpoint,
    chunkSize: options.chunkSize,
    headers: { Authorization: options.authorization },
    metadata: options.metadata ?? { filename: path.basename(file.path), filetype: 'application/octet-stream' },
    retryDelays: null,
    urlStorage: options.urlStorage,
    removeFingerprintOnSuccess: true,
    onBeforeRequest: () => {
      requests++;
    },
    onProgress: (sent, total) => options.onProgress?.(sent, total, upload),
    onError: (e) => rejectDone(e),
    onSuccess: () => resolveDone(upload.url!),
  });
  const start = async () => {
    if (options.resume) {
      const previous = await upload.findPreviousUploads();
      if (previous.length === 0) throw new Error('no previous upload to resume');
      upload.resumeFromPreviousUpload(previous[0]);
    }
    upload.start();
  };
  start().catch(rejectDone);
  return { upload, done, requests: () => requests };
}

/** The last path segment of an upload URL: the uploadId the content routes take. */
export const uploadIdOf = (url: string) => new URL(url).pathname.split('/').pop()!;

/**
 * A TCP proxy that counts the bytes clients send through it (request heads and bodies: what goes over the
 * wire) and can cut every connection at once, as a broken link does.
 */
export class CountingProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Client-to-server bytes so far. */
  sent = 0;
  private threshold?: { bytes: number; action: () => void };

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<string> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('data', (chunk: Buffer) => {
        this.sent += chunk.length;
        if (!upstream.write(chunk)) client.pause();
        const t = this.threshold;
        if (t && this.sent >= t.bytes) {
          this.threshold = undefined;
          t.action();
        }
      });
      upstream.on('drain', () => client.resume());
      upstream.pipe(client);
      client.on('end', () => upstream.end());
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Runs `action` once the clients have sent `bytes` in all (counted from now on, added to what was sent before). */
  when(bytes: number, action: () => void): void {
    this.threshold = { bytes, action };
  }

  /** Cuts every open connection, both ways, without a goodbye. */
  cutAll(): void {
    for (const s of this.sockets) s.resetAndDestroy();
    this.sockets.clear();
  }

  async stop(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
